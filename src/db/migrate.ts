import type { Db } from './create-db';
import { applyMigrations, readMigrations } from './schema-engine';

/** Applies pending migrations; concurrent starters on one PostgreSQL wait for each other. */
export async function migrate(db: Db): Promise<string[]> {
  return db.withMigrationLock(() => applyMigrations(db.migrationFactory()));
}

/** True when every migration folder is recorded as finished in the database. */
export async function migrationsApplied(db: Db): Promise<boolean> {
  const expected = readMigrations().migrationDirectories.map((m) => m.path);
  // A database never migrated has no _prisma_migrations at all: that is
  // "migrations pending", not an error (which /readyz reported as "database unreachable").
  const [table] = await db.sql<{ present: boolean }>(`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`);
  if (!table?.present) return expected.length === 0;
  const rows = await db.sql<{ migration_name: string }>(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  );
  const done = new Set(rows.map((r) => r.migration_name));
  return expected.every((name) => done.has(name));
}
