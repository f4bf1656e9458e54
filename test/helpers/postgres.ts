import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describeIf } from './skip';

/** Set by .ci/run (and by you) to run the suite against a real PostgreSQL server. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const onPostgres = Boolean(TEST_DATABASE_URL);

/** `describe` that runs only against real PostgreSQL (multi-process behaviour lives there). */
export const describeOnPostgres: jest.Describe = describeIf(onPostgres, 'needs-postgres', 'runs on a PostgreSQL server only (TEST_DATABASE_URL)');

/** A fresh, empty database on the test server; returns its URL and a function that drops it. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
