import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createDb, type Db } from '../src/db/create-db';
import { migrate, migrationsApplied } from '../src/db/migrate';
import { diffMigrationsToSchema, MIGRATIONS_DIR } from '../src/db/schema-engine';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { createTestDb, withPrisma, type TestDb } from './helpers/test-db';

// Migrations are ordinary Prisma migrations in prisma/migrations, applied at
// start by the WASM schema engine like `prisma migrate deploy` (docs/api.md, "Operations").

/** The migration folders, read straight from disk. */
const FOLDERS = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

const TABLES = ['accounts', 'users', 'oauth_clients', 'oauth_tokens', 'voice_phone_numbers', 'groups', 'callback_requests', 'rate_window_hits'];

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
}

const migrationRows = (db: Db) =>
  db.sql<MigrationRow>('SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name');

async function tables(db: Db): Promise<string[]> {
  const rows = await db.sql<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
  return rows.map((r) => r.tablename);
}

describe('migrations', () => {
  it('has at least one migration folder, each with a migration.sql', () => {
    expect(FOLDERS.length).toBeGreaterThan(0);
    for (const name of FOLDERS) expect(readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8').trim()).not.toBe('');
  });

  it('agree with schema.prisma (no drift: `npm run db:migration -- <name>` would write nothing)', async () => {
    // The diff replays the migrations on a shadow database; PGlite's is a
    // throwaway in-memory one, so this runs the same on both suites.
    const shadow = await createDb({ dataDir: ':memory:' });
    try {
      expect(await diffMigrationsToSchema(shadow.migrationFactory())).toBe('');
    } finally {
      await shadow.close();
    }
  });

  describe('on an empty database', () => {
    let db: TestDb;

    beforeAll(async () => {
      db = await createTestDb({ migrate: false });
    });
    afterAll(() => db.close());

    it('applies every folder once, records each as finished, and a second run is a no-op', async () => {
      expect(await migrationsApplied(db)).toBe(false);
      expect(await migrate(db)).toEqual(FOLDERS);

      const rows = await migrationRows(db);
      expect(rows.map((r) => r.migration_name)).toEqual(FOLDERS);
      for (const row of rows) {
        expect(row.finished_at).not.toBeNull();
        expect(row.rolled_back_at).toBeNull();
        expect(Number(row.applied_steps_count)).toBeGreaterThanOrEqual(1);
        // the checksum `prisma migrate` would compute: edits to an applied migration are detectable
        const sql = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
        expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      }
      expect(await tables(db)).toEqual(expect.arrayContaining(TABLES));
      expect(await migrationsApplied(db)).toBe(true);

      expect(await migrate(db)).toEqual([]);
      const again = await migrationRows(db);
      expect(again).toEqual(rows); // nothing re-applied, nothing rewritten
    });
  });

  describeOnPostgres('on PostgreSQL', () => {
    it('lets two processes migrate one empty database at the same time', async () => {
      const fresh = await freshPostgresDatabase();
      const a = withPrisma(await createDb({ databaseUrl: fresh.url, poolSize: 2 }));
      const b = withPrisma(await createDb({ databaseUrl: fresh.url, poolSize: 2 }));
      try {
        const [fromA, fromB] = await Promise.all([migrate(a), migrate(b)]);
        // one of them applied everything, the other found nothing left to do
        expect([...fromA, ...fromB].sort()).toEqual(FOLDERS);
        expect([fromA.length, fromB.length].sort()).toEqual([0, FOLDERS.length]);

        const rows = await migrationRows(a);
        expect(rows.map((r) => r.migration_name)).toEqual(FOLDERS);
        expect(rows.every((r) => r.finished_at !== null && r.rolled_back_at === null)).toBe(true);
        expect(await tables(b)).toEqual(expect.arrayContaining(TABLES));
        // and the database works: a write through one is read through the other
        await a.prisma.account.create({ data: { name: 'both-see-me' } });
        expect(await b.prisma.account.count({ where: { name: 'both-see-me' } })).toBe(1);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await fresh.drop();
      }
    });

    it('refuses to diff against a PostgreSQL database instead of replaying the migrations into it', async () => {
      const db = await createTestDb({ migrate: false });
      try {
        await expect(diffMigrationsToSchema(db.migrationFactory())).rejects.toThrow(/PGlite/);
        expect(await tables(db)).toEqual([]);
      } finally {
        await db.close();
      }
    });
  });
});
