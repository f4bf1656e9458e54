// npm run db:migration -- <name>
// Writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that
// brings the existing migrations up to schema.prisma. The diff replays the
// migrations on an in-memory PGlite shadow database: no server needed.
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { createDb } from '../src/db/create-db';
import { diffMigrationsToSchema, MIGRATIONS_DIR } from '../src/db/schema-engine';

async function main(): Promise<void> {
  const name = (process.argv[2] ?? '').trim();
  if (!/^[a-z0-9_]+$/.test(name)) {
    console.error('usage: npm run db:migration -- <name>   (name: lower-case letters, digits and _)');
    process.exit(2);
  }
  // The engine reads the connector from the lock file, even for the first migration.
  mkdirSync(MIGRATIONS_DIR, { recursive: true });
  const lock = path.join(MIGRATIONS_DIR, 'migration_lock.toml');
  if (!existsSync(lock)) writeFileSync(lock, '# Do not edit: used by Prisma Migrate\nprovider = "postgresql"\n');
  const db = await createDb({ dataDir: ':memory:' });
  try {
    const sql = await diffMigrationsToSchema(db.migrationFactory());
    if (!sql) {
      console.log('schema.prisma and the migrations agree: nothing to write');
      return;
    }
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'migration.sql'), sql);
    console.log(`wrote ${path.relative(process.cwd(), dir)}/migration.sql`);
  } finally {
    await db.close();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
