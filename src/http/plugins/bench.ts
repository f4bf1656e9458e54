import fp from 'fastify-plugin';
import type { Db } from '../../db/create-db';

/**
 * Registered only with BENCH_MODE=true (app.ts): the SQL statements sent and the
 * requests received (these stats requests excluded), so that requests the load
 * generator gave up on when it stopped (they still run their statements) count too.
 */
export const benchStats = fp<{ db: Db }>(async (fastify, { db }) => {
  let requests = 0;
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (!request.url.startsWith('/__bench/')) requests++;
    done();
  });
  fastify.get('/__bench/stats', async () => ({ sqlStatements: db.statementCount(), requests, rss: process.memoryUsage().rss }));
}, { name: 'bench-stats' });
