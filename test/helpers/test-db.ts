import { createDb, type Db } from '../../src/db/create-db';
import { migrate } from '../../src/db/migrate';
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
 */
export async function createTestDb(options: { migrate?: boolean } = {}): Promise<TestDb> {
  if (!onPostgres) {
    const db = await createDb({ dataDir: ':memory:', countStatements: true });
    if (options.migrate !== false) await migrate(db);
    return withPrisma(db);
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
