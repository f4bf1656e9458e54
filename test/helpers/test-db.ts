import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '../../src/db/create-db';
import { migrate } from '../../src/db/migrate';
import { readMigrations } from '../../src/db/schema-engine';
import { PrismaClient } from '../../src/generated/prisma/client';
import { freshPostgresDatabase, onPostgres } from './postgres';

export interface TestDb extends Db {
  /** Prisma's typed client, for fixtures and checks (see withPrisma) */
  prisma: PrismaClient;
  /** the database's URL on PostgreSQL runs; undefined on PGlite */
  url?: string;
}

/**
 * The database with Prisma's typed client beside it, for the tests' fixtures and
 * checks. The service itself runs plain SQL and builds no Prisma client: this one
 * shares the PGlite instance, or opens a small pool of its own on PostgreSQL.
 */
export function withPrisma<D extends Db>(db: D): D & { prisma: PrismaClient } {
  const prisma = new PrismaClient({ adapter: db.migrationFactory() });
  return {
    ...db,
    prisma,
    async close() {
      await prisma.$disconnect();
      await db.close();
    },
  };
}

/**
 * A migrated, empty database of its own: in-memory PGlite by default, a fresh
 * database on the PostgreSQL server of TEST_DATABASE_URL when that is set.
 * `dataDir` (PGlite runs): PGlite in that folder instead of in memory, which a
 * server process or the CLI opens once this one is closed.
 */
export async function createTestDb(options: { migrate?: boolean; dataDir?: string } = {}): Promise<TestDb> {
  if (!onPostgres && options.dataDir !== undefined) {
    const db = await createDb({ dataDir: options.dataDir, countStatements: true });
    if (options.migrate !== false) await migrate(db);
    return withPrisma(db);
  }
  if (!onPostgres) {
    if (options.migrate === false) return withPrisma(await createDb({ dataDir: ':memory:', countStatements: true }));
    return withPrisma(await createDb({ dataDir: ':memory:', countStatements: true, loadDataDir: await migratedTemplate() }));
  }
  const fresh = await freshPostgresDatabase();
  const db = await createDb({ databaseUrl: fresh.url, poolSize: 5, countStatements: true });
  if (options.migrate !== false) await migrate(db);
  return withPrisma({
    ...db,
    url: fresh.url,
    async close() {
      await db.close();
      await fresh.drop();
    },
  });
}

/**
 * A PGlite database just migrated, as a dump that a new in-memory one starts from
 * (about 0.5 s instead of 3 s for initdb and the migrations: the PGlite runs create
 * hundreds). Made once per set of migrations and shared by every jest worker through
 * a file in the temporary folder, named by the migrations' hash; written whole, then
 * renamed, so that a worker never reads half of one.
 */
async function migratedTemplate(): Promise<Blob> {
  // the migrations and the PGlite release that wrote the dump
  const hash = createHash('sha256').update(readFileSync(path.join(path.dirname(require.resolve('@electric-sql/pglite')), '../package.json')));
  for (const m of readMigrations().migrationDirectories) hash.update(m.path).update(m.migrationFile.content.tag === 'ok' ? m.migrationFile.content.value : '');
  const file = path.join(os.tmpdir(), `pglite-migrated-${hash.digest('hex').slice(0, 16)}.tar`);
  if (existsSync(file)) return new Blob([readFileSync(file)]);
  const db = await createDb({ dataDir: ':memory:' });
  try {
    await migrate(db);
    const dump = await db.dumpDataDir();
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
    return dump;
  } finally {
    await db.close();
  }
}
