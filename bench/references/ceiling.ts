// Benchmark reference "ceiling": a bare Fastify 5 route returning a small
// constant JSON. Same Node version, NODE_ENV and log level as the service.
import Fastify from 'fastify';

async function main() {
  const fastify = Fastify({ logger: { level: process.env.LOG_LEVEL || 'warn' } });
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/ceiling', async () => ({ status: 'ok', service: 'ceiling' }));
  await fastify.listen({ port: Number(process.env.PORT), host: process.env.HOST || '127.0.0.1' });
  const stop = () => void fastify.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
