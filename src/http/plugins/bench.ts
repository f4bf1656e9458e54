import { Session } from 'node:inspector/promises';
import fp from 'fastify-plugin';
import type { Db } from '../../db/create-db';

/**
 * Registered only with BENCH_MODE=true (app.ts): the SQL statements sent and the
 * requests received (these stats requests excluded), so that requests the load
 * generator gave up on when it stopped (they still run their statements) count too.
 * And V8's sampling heap profiler around a measurement (`npm run bench --
 * --heap-sampling`): what the requests allocated, garbage included, by function.
 */
export const benchStats = fp<{ db: Db }>(async (fastify, { db }) => {
  let requests = 0;
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (!request.url.startsWith('/__bench/')) requests++;
    done();
  });
  fastify.get('/__bench/stats', async () => ({ sqlStatements: db.statementCount(), requests, rss: process.memoryUsage().rss }));

  let session: Session | undefined;
  fastify.post('/__bench/heap-sampling/start', async () => {
    if (!session) {
      session = new Session();
      session.connect();
    }
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 32_768,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return { sampling: true };
  });
  fastify.post('/__bench/heap-sampling/stop', async (_request, reply) => {
    if (!session) return reply.code(409).send({ error: 'not sampling' });
    const { profile } = await session.post('HeapProfiler.stopSampling');
    return reply.type('application/json').send(JSON.stringify(profile));
  });
  fastify.addHook('onClose', async () => session?.disconnect());
}, { name: 'bench-stats' });
