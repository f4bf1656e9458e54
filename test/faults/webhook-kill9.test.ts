import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerHandle } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/service-stack';

// kill -9 of the server while a webhook delivery is in flight (docs/api.md, "Webhook
// deliveries"): the receiver holds the request, the process dies, a new one starts;
// the job's lease (60 s) runs out and the event is delivered again, with the same
// webhook-id, about a minute after the crash. About 70 s. Before that, the crash between
// the commit and the delivery: a web-only process (WORKER=false) commits a change and is
// killed before any worker saw its event; a process with a worker, started after, delivers it.

jest.setTimeout(300_000);

const CREATED = 'zen:event-type:oauth_client.created';

let stack: Stack;
let server: ServerHandle;
let receiver: http.Server;
const requests: { at: number; id: string }[] = [];
let held: http.ServerResponse | undefined;
let firstArrived: () => void;
const arrived = new Promise<void>((r) => (firstArrived = r));

beforeAll(async () => {
  ({ stack, server } = await startStack({ WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'true' }));
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests.push({ at: Date.now(), id: String(req.headers['webhook-id']) });
      if (requests.length === 1) {
        // the first is held: no answer while the server dies
        held = res;
        firstArrived();
        return;
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
}, 180_000);
afterAll(async () => {
  held?.destroy();
  receiver?.closeAllConnections();
  await new Promise<void>((r) => receiver?.close(() => r()));
  await stack?.close();
});

const post = async (url: string, body: unknown) => {
  const res = await fetch(`${server.url}${url}`, { method: 'POST', headers: { authorization: stack.adminBearer, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, any>;
};
const endpoint = () => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

test('a change committed by a process killed before its event was delivered is delivered by the next process', async () => {
  // a receiver of its own, answering at once, so that the in-flight case below starts clean
  const seen: { body: Record<string, any>; id: string }[] = [];
  const quick = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), id: String(req.headers['webhook-id']) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => quick.listen(0, '127.0.0.1', r));
  try {
    await server.kill();
    server = await stack.startServer({ WORKER: 'false' });
    const url = `http://127.0.0.1:${(quick.address() as AddressInfo).port}/quick`;
    const hook = await post('/api/v2/webhooks', { webhook: { name: 'Before delivery', endpoint: url, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [CREATED] } });
    const created = await post('/api/v2/oauth/clients', { name: 'Committed', scopes: 'read', redirect_uris: 'https://committed.example/cb' });
    // committed: the event and its job are rows; no worker runs in this process
    const { rows: pending } = await stack.sql.query("SELECT count(*)::int AS n FROM jobs WHERE kind LIKE 'event%' OR kind LIKE 'webhook%'");
    expect(pending[0].n).toBeGreaterThan(0);
    await server.kill();
    expect(seen).toEqual([]);
    server = await stack.startServer();
    const end = Date.now() + 15_000;
    while (seen.length < 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(seen).toHaveLength(1);
    expect(seen[0].body.type).toBe(CREATED);
    expect(seen[0].body.detail.id).toBe(created.id);
    const { rows } = await stack.sql.query('SELECT status, attempts FROM webhook_invocations WHERE webhook_id = $1', [hook.webhook.id]);
    expect(rows).toEqual([{ status: 'success', attempts: 1 }]);
    // the webhook stops listening, so that the next case's client reaches only its own receiver
    const del = await fetch(`${server.url}/api/v2/webhooks/${hook.webhook.id}`, { method: 'DELETE', headers: { authorization: stack.adminBearer } });
    expect(del.status).toBe(204);
  } finally {
    quick.closeAllConnections();
    await new Promise<void>((r) => quick.close(() => r()));
  }
});

test('a delivery in flight when its server is killed is delivered after the restart, within ~70 s', async () => {
  const hook = await post('/api/v2/webhooks', { webhook: { name: 'Clients', endpoint: endpoint(), http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [CREATED] } });
  await post('/api/v2/oauth/clients', { name: 'Crash', scopes: 'read', redirect_uris: 'https://crash.example/cb' });
  await arrived;
  await server.kill();
  const killedAt = Date.now();
  held?.destroy();
  server = await stack.startServer();
  const end = killedAt + 90_000;
  while (requests.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
  expect(requests).toHaveLength(2);
  expect(requests[1].id).toBe(requests[0].id);
  expect(requests[1].at - killedAt).toBeLessThan(75_000);
  const { rows } = await stack.sql.query('SELECT status, attempts FROM webhook_invocations WHERE webhook_id = $1', [hook.webhook.id]);
  // the killed attempt was never recorded: the one that succeeded is the first on record
  expect(rows).toEqual([{ status: 'success', attempts: 1 }]);
});
