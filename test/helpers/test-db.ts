import { createDb, type Db } from '../../src/db/create-db';
import { migrate } from '../../src/db/migrate';
import { freshPostgresDatabase, onPostgres } from './postgres';

export interface TestDb extends Db {
  /** the database's URL on PostgreSQL runs; undefined on PGlite */
  url?: string;
}

/**
 * A migrated, empty database of its own: in-memory PGlite by default, a fresh
 * database on the PostgreSQL server of TEST_DATABASE_URL when that is set.
 */
export async function createTestDb(options: { migrate?: boolean } = {}): Promise<TestDb> {
  if (!onPostgres) {
    const db = await createDb({ dataDir: ':memory:', countStatements: true });
    if (options.migrate !== false) await migrate(db);
    return db;
  }
  const fresh = await freshPostgresDatabase();
  const db = await createDb({ databaseUrl: fresh.url, poolSize: 5, countStatements: true });
  if (options.migrate !== false) await migrate(db);
  return {
    ...db,
    url: fresh.url,
    async close() {
      await db.close();
      await fresh.drop();
    },
  };
}
