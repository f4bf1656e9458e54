// npm run db:migration -- <name>
// Writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that
// brings the existing migrations up to schema.prisma. The diff replays the
// migrations on an in-memory PGlite shadow database: no server needed.
// Then every database function whose canonical source (prisma/functions/*.sql)
// differs from its last inlined copy is appended, verbatim, between marker lines
// (scripts/sql-functions.ts). Hand-written steps (a backfill, a trigger) go into
// the written file afterwards; never edit an inlined function there.
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { createDb } from '../src/db/create-db';
import { diffMigrationsToSchema, MIGRATIONS_DIR } from '../src/db/schema-engine';
import { inlineFunction, pendingFunctions } from './sql-functions';

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
    const diff = await diffMigrationsToSchema(db.migrationFactory());
    const functions = pendingFunctions();
    if (!diff && functions.length === 0) {
      console.log('schema.prisma, prisma/functions and the migrations agree: nothing to write');
      return;
    }
    // Functions after the schema's changes: a LANGUAGE sql body is checked against the tables when created.
    const sql = [diff, ...functions.map((fn) => `-- Function ${fn.name}\n${inlineFunction(fn)}`)].filter(Boolean).join('\n');
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'migration.sql'), sql);
    console.log(`wrote ${path.relative(process.cwd(), dir)}/migration.sql${functions.length ? ` (functions: ${functions.map((f) => f.name).join(', ')})` : ''}`);
  } finally {
    await db.close();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
