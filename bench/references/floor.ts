// Benchmark reference "floor of the work": the least an authenticated read can
// do. Takes the Bearer header, hashes it like the service (HMAC-SHA-256 under
// HASH_KEY, hex) and reads that token's row with one raw pg query on a pool of
// the service's size, returning it as JSON.
import Fastify from 'fastify';
import pg from 'pg';
import { createHmac } from 'node:crypto';

async function main() {
  const key = Buffer.from(process.env.HASH_KEY ?? '', 'utf8');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE || 10) });
  pool.on('error', () => {});
  const fastify = Fastify({ logger: { level: process.env.LOG_LEVEL || 'warn' } });
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/floor', async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    const hash = createHmac('sha256', key).update(token, 'utf8').digest('hex');
    const { rows } = await pool.query('SELECT * FROM oauth_tokens WHERE token_hash = $1 AND revoked_at IS NULL', [hash]);
    if (!rows[0]) return reply.code(401).send({ error: "Couldn't authenticate you" });
    return { token: rows[0] };
  });
  await fastify.listen({ port: Number(process.env.PORT), host: process.env.HOST || '127.0.0.1' });
  const stop = () => void fastify.close().then(() => pool.end()).then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
