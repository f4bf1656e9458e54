import fp from 'fastify-plugin';
import type { Db } from '../../db/create-db';
import { migrationsApplied } from '../../db/migrate';

/** /readyz answers 503 when the database has not answered SELECT 1 within this time */
const READY_TIMEOUT_MS = 2_000;

/** GET /healthz (the process is up) and GET /readyz (the database answers and is migrated). */
export const health = fp<{ db: Db }>(async (fastify, { db }) => {
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  let migrated = false;
  fastify.get('/readyz', async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      // a database that accepts connections but does not answer is not ready either
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('readiness check timed out')), READY_TIMEOUT_MS);
      });
      await Promise.race([db.sql('SELECT 1'), timeout]);
      migrated ||= await migrationsApplied(db);
      if (migrated) return { status: 'ready' };
      return reply.code(503).send({ status: 'unavailable', reason: 'migrations pending' });
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    } finally {
      clearTimeout(timer);
    }
  });
}, { name: 'health' });
