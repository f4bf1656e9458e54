// Benchmark reference "list floor": the least the token list (scenarios 4a, 4b
// and 5) can do. GET /api/v2/oauth/tokens.json with page[size] and page[after]
// (the service's signed cursor, checked the same way), authenticated like the
// floor (HMAC-SHA-256 of the Bearer under HASH_KEY), and ONE raw pg query that
// both authenticates and reads the page (LIST_FLOOR_SQL: the caller's account's
// live tokens in id order after the cursor, with the client's name and the
// user's email). Each row becomes a Zendesk-like token object, and the page is
// JSON.stringify'd with the service's envelope (tokens, meta, links). Other
// query parameters are ignored. Pool of the service's size, unnamed statements
// (parsed and planned by PostgreSQL on every request), like the floor.
import Fastify from 'fastify';
import pg from 'pg';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { LIST_FLOOR_SQL } from './list-floor-sql';

interface Row {
  id: string | null;
  client_id: string | null;
  user_id: string;
  token_prefix: string;
  scopes: string[] | null;
  created_at: Date;
  expires_at: Date | null;
  used_at: Date | null;
  refresh_token_prefix: string | null;
  refresh_token_expires_at: Date | null;
  client_name: string | null;
  user_email: string;
}

const iso = (d: Date | null) => (d === null ? null : `${d.toISOString().slice(0, 19)}Z`);

async function main() {
  const key = Buffer.from(process.env.HASH_KEY ?? '', 'utf8');
  const base = process.env.PUBLIC_URL ?? '';
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE || 10) });
  pool.on('error', () => {});
  // the service's cursor: base64url(id) "." first 16 characters of the base64url HMAC
  const sign = (payload: string) => createHmac('sha256', key).update(`cursor:${payload}`).digest('base64url').slice(0, 16);
  const encode = (id: string) => {
    const payload = Buffer.from(id).toString('base64url');
    return `${payload}.${sign(payload)}`;
  };
  const decode = (cursor: string): string | undefined => {
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined) return undefined;
    const expected = Buffer.from(sign(payload));
    if (signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), expected)) return undefined;
    const id = Buffer.from(payload, 'base64url').toString('utf8');
    return /^[1-9]\d{0,18}$/.test(id) ? id : undefined;
  };
  const link = (size: number, name: 'after' | 'before', cursor: string) => `${base}/api/v2/oauth/tokens.json?page%5Bsize%5D=${size}&page%5B${name}%5D=${cursor}`;

  const fastify = Fastify({ logger: { level: process.env.LOG_LEVEL || 'warn' } });
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/api/v2/oauth/tokens.json', async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const size = Math.min(100, Math.max(1, Number(query['page[size]']) || 100));
    const after = query['page[after]'] ? decode(query['page[after]']) : '0';
    if (after === undefined) return reply.code(400).send({ error: 'Invalid pagination cursor' });
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    const hash = createHmac('sha256', key).update(token, 'utf8').digest('hex');
    const { rows } = await pool.query<Row>(LIST_FLOOR_SQL, [hash, after, size + 1]);
    if (!rows.length) return reply.code(401).send({ error: "Couldn't authenticate you" });
    const page = rows[0].id === null ? [] : rows.slice(0, size);
    const tokens = page.map((r) => ({
      id: Number(r.id),
      token: r.token_prefix,
      client_id: r.client_id === null ? null : Number(r.client_id),
      user_id: Number(r.user_id),
      scopes: r.scopes ?? [],
      created_at: iso(r.created_at),
      expires_at: iso(r.expires_at),
      used_at: iso(r.used_at),
      refresh_token: r.refresh_token_prefix,
      refresh_token_expires_at: iso(r.refresh_token_expires_at),
      url: `${base}/api/v2/oauth/tokens/${r.id}.json`,
      client_name: r.client_name,
      user_email: r.user_email,
    }));
    const hasMore = rows.length > size;
    const first = page.length ? encode(page[0].id!) : null;
    const last = page.length ? encode(page[page.length - 1].id!) : null;
    const body = {
      tokens,
      meta: { has_more: hasMore, after_cursor: last, before_cursor: first },
      links: { next: hasMore && last ? link(size, 'after', last) : null, prev: after !== '0' && first ? link(size, 'before', first) : null },
    };
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
  await fastify.listen({ port: Number(process.env.PORT), host: process.env.HOST || '127.0.0.1' });
  const stop = () => void fastify.close().then(() => pool.end()).then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
