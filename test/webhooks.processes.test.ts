import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, startServer, type ServerHandle } from './helpers/processes';

// Webhook deliveries in real processes on one PostgreSQL (docs/api.md, "Webhook
// deliveries"): two servers, each running the engine, share the work; every event
// reaches the receiver, and no invocation is delivered twice.

jest.setTimeout(300_000);

const EVENTS = 1000;
const BATCH = 50;
const TOKEN_CREATED = 'zen:event-type:oauth_token.created';

describeOnPostgres('webhook deliveries across server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let servers: ServerHandle[];
  let receiver: http.Server;
  /** requests per webhook-id */
  const received = new Map<string, number>();
  const env = () => ({
    DATABASE_URL: database.url, ADMIN_PASSWORD: 'admin-password-1', HASH_KEY: 'shared-hash-key-for-both-processes-0123', LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'true',
  });
  const basic = `Basic ${Buffer.from('admin@example.com:admin-password-1').toString('base64')}`;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    servers = await Promise.all([startServer(env()), startServer(env())]);
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        received.set(id, (received.get(id) ?? 0) + 1);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  }, 180_000);
  afterAll(async () => {
    await killAll();
    await new Promise<void>((r) => receiver.close(() => r()));
    await database.drop();
  });

  const post = async (base: string, authorization: string, url: string, body: unknown) => {
    const res = await fetch(`${base}${url}`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, any>;
  };

  it(`${EVENTS} events made on two processes: each delivered exactly once`, async () => {
    const [a, b] = servers;
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const hook = await post(a.url, basic, '/api/v2/webhooks', { webhook: { name: 'All tokens', endpoint, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [TOKEN_CREATED] } });
    const client = await post(a.url, basic, '/api/v2/oauth/clients', { name: 'Load', scopes: 'read write', redirect_uris: 'https://load.example/cb' });
    // one token by password (its own event counts), then a Bearer for the rest: no password hashing per request
    const first = await post(a.url, basic, '/api/v2/oauth/tokens', { token: { client_id: client.id, scopes: ['read', 'write'] } });
    const bearer = `Bearer ${first.token.token}`;
    for (let done = 1; done < EVENTS; done += BATCH) {
      const n = Math.min(BATCH, EVENTS - done);
      await Promise.all(Array.from({ length: n }, (_, i) => post(servers[(done + i) % 2].url, bearer, '/api/v2/oauth/tokens', { token: { client_id: client.id, scopes: ['read'] } })));
    }
    const end = Date.now() + 120_000;
    while (received.size < EVENTS && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
    expect(received.size).toBe(EVENTS);
    // a moment for a late duplicate to show
    await new Promise((r) => setTimeout(r, 1000));
    expect([...received.values()].filter((n) => n !== 1)).toEqual([]);
    const invocations = await fetch(`${b.url}/api/v2/webhooks/${hook.webhook.id}/invocations?filter[status]=success&page[size]=100`, { headers: { authorization: bearer } });
    expect(invocations.status).toBe(200);
    expect(((await invocations.json()) as { invocations: unknown[] }).invocations).toHaveLength(100);
  });
});
