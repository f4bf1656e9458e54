import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import type { JobEngine } from '../src/jobs/engine';
import { createJobEngine } from '../src/jobs/kinds';
import { SigningSecretBox } from '../src/domain/webhooks/signing-secret';
import { standardWebhooksSecret } from '../src/webhooks/signing';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Webhook deliveries": events reach subscribed receivers (real HTTP servers
// on 127.0.0.1, WEBHOOK_ALLOW_PRIVATE_ENDPOINTS on), signed, retried, with a breaker.

jest.setTimeout(60_000);

const CREATED = 'zen:event-type:oauth_client.created';
const REVOKED = 'zen:event-type:oauth_token.revoked';

/** Zendesk's documented receiver check, as its guide writes it. */
function zendeskIsValidSignature(signature: string, body: string, timestamp: string, signingSecret: string): boolean {
  const sig = createHmac('sha256', signingSecret).update(timestamp + body).digest('base64');
  return Buffer.compare(Buffer.from(signature), Buffer.from(sig)) === 0;
}

interface Received { at: number; headers: http.IncomingHttpHeaders; body: string; method: string }

/** A receiver answering each request with the next of `answers` (the last one repeats). */
async function receiver(answers: { status: number; body?: string; headers?: Record<string, string> }[] = [{ status: 200 }]) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ at: Date.now(), headers: req.headers, body, method: req.method ?? '' });
      const answer = answers[Math.min(received.length - 1, answers.length - 1)];
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('webhook deliveries (docs/api.md, "Webhook deliveries")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let engine: JobEngine;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
    engine = createJobEngine(ctx.db, ctx.app.services, { pollSeconds: 0.2, webhooks: { retryDelay: (_n, retryAfter) => retryAfter ?? 0.05 } });
    await engine.start();
  });
  afterAll(async () => {
    await engine.stop();
    await Promise.all(closers.map((c) => c()));
    await ctx.close();
  });

  const rest = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, who = admin) =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: payload ? { authorization: who.basic, 'content-type': 'application/json' } : { authorization: who.basic }, payload });
  const hook = async (url: string, over: Record<string, unknown> = {}) => {
    const res = await rest('POST', '/webhooks', { webhook: { name: 'Receiver', endpoint: url, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [CREATED], ...over } });
    expect(res.statusCode).toBe(201);
    const id = res.json().webhook.id as string;
    const secret = (await rest('GET', `/webhooks/${id}/signing_secret`)).json().signing_secret.secret as string;
    return { id, secret };
  };
  const createClient = async (name = 'Dashboard') => {
    const res = await rest('POST', '/oauth/clients', { name, company: 'Acme', client_type: 'confidential', scopes: 'read write', redirect_uris: ['https://app.example.com/cb'] });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string };
  };
  const until = async (check: () => boolean | Promise<boolean>, ms = 5000) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const open = async (answers?: Parameters<typeof receiver>[0]) => {
    const r = await receiver(answers);
    closers.push(r.close);
    return r;
  };
  const invocations = async (webhookId: string) =>
    (await ctx.db.sql<{ id: string; status: string; attempts: number; reason: string | null }>('SELECT id, status, attempts, reason FROM webhook_invocations WHERE webhook_id = $1 ORDER BY id', [webhookId]));

  it('a created client reaches a subscribed receiver within 2 s, signed for Zendesk receivers and Standard Webhooks ones', async () => {
    const r = await open();
    const { id, secret } = await hook(r.url);
    const started = Date.now();
    const client = await createClient();
    await until(() => r.received.length === 1, 2000);
    expect(r.received[0].at - started).toBeLessThan(2000);
    const { headers, body, method } = r.received[0];
    expect(method).toBe('POST');
    expect(headers['content-type']).toMatch(/^application\/json/);
    expect(headers['user-agent']).toEqual(expect.any(String));
    expect(zendeskIsValidSignature(String(headers['x-zendesk-webhook-signature']), body, String(headers['x-zendesk-webhook-signature-timestamp']), secret)).toBe(true);
    const payload = new Webhook(standardWebhooksSecret(secret)).verify(body, headers as Record<string, string>) as Record<string, any>;
    expect(payload).toMatchObject({ type: CREATED, subject: `zen:oauth_client:${client.id}`, detail: { id: client.id } });
    const [invocation] = await invocations(id);
    expect(headers['webhook-id']).toBe(String(invocation.id));
    await until(async () => (await invocations(id))[0].status === 'success');
    await rest('DELETE', `/webhooks/${id}`);
  });

  it('nothing for a change that rolls back, an unsubscribed type, or an inactive webhook', async () => {
    const subscribed = await open();
    const other = await open();
    const inactive = await open();
    const a = await hook(subscribed.url);
    const b = await hook(other.url, { subscriptions: [REVOKED] });
    const c = await hook(inactive.url, { status: 'inactive' });
    // a refused create (invalid redirect URI) rolls back: no event, no delivery
    expect((await rest('POST', '/oauth/clients', { name: 'Bad', company: 'Acme', client_type: 'confidential', scopes: 'read write', redirect_uris: ['not a uri'] })).statusCode).toBe(422);
    await createClient('Second');
    await until(() => subscribed.received.length === 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(subscribed.received).toHaveLength(1);
    expect(JSON.parse(subscribed.received[0].body).detail.name).toBe('Second');
    expect([other.received.length, inactive.received.length]).toEqual([0, 0]);
    for (const h of [a, b, c]) await rest('DELETE', `/webhooks/${h.id}`);
  });

  it('503, 503, 200: three attempts, one invocation, success; the webhook-id the same on each', async () => {
    const r = await open([{ status: 503, body: 'down' }, { status: 503, body: 'still down' }, { status: 200, body: 'ok' }]);
    const { id } = await hook(r.url);
    await createClient();
    await until(async () => (await invocations(id))[0]?.status === 'success');
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    expect((await invocations(id))[0]).toMatchObject({ status: 'success', attempts: 3 });
    const attempts = await ctx.db.sql<{ status_code: number; response: string; duration_ms: number }>(
      'SELECT a.status_code, a.response, a.duration_ms FROM webhook_invocation_attempts a JOIN webhook_invocations i ON i.id = a.invocation_id WHERE i.webhook_id = $1 ORDER BY a.id',
      [id],
    );
    expect(attempts.map((a) => [a.status_code, a.response])).toEqual([[503, 'down'], [503, 'still down'], [200, 'ok']]);

    // the invocations endpoint lists it, with its three attempts
    const list = await rest('GET', `/webhooks/${id}/invocations?filter[status]=success&filter[event_type]=${encodeURIComponent(CREATED)}`);
    expect(list.statusCode).toBe(200);
    const [invocation] = list.json().invocations;
    expect(list.json().invocations).toHaveLength(1);
    expect(invocation).toEqual({
      id: r.received[0].headers['webhook-id'], webhook_id: id, event_id: JSON.parse(r.received[0].body).id, event_type: CREATED, status: 'success', attempts: 3, reason: null,
      created_at: expect.any(String), updated_at: expect.any(String), latest_completed_at: expect.any(String),
    });
    expect((await rest('GET', `/webhooks/${id}/invocations?filter[status]=failed`)).json().invocations).toEqual([]);
    const shown = await rest('GET', `/webhooks/${id}/invocations/${invocation.id}/attempts`);
    expect(shown.statusCode).toBe(200);
    expect(shown.json().attempts.map((a: any) => [a.status, a.response, a.invocation_id, typeof a.duration_ms])).toEqual([
      [503, 'down', invocation.id, 'number'], [503, 'still down', invocation.id, 'number'], [200, 'ok', invocation.id, 'number'],
    ]);
    // GraphQL: the same, as webhooks.read
    const gql = await ctx.graphql(
      'query($w: ID!, $i: ID!) { webhookInvocations(webhookId: $w) { edges { node { id status attempts } } } webhookInvocationAttempts(webhookId: $w, invocationId: $i) { statusCode } }',
      { w: id, i: invocation.id }, { authorization: admin.basic },
    );
    expect(gql.json().data).toEqual({ webhookInvocations: { edges: [{ node: { id: invocation.id, status: 'SUCCESS', attempts: 3 } }] }, webhookInvocationAttempts: [{ statusCode: 503 }, { statusCode: 503 }, { statusCode: 200 }] });

    // another account's admin: 404; an agent of this one: 403
    const stranger = await ctx.createUser(await ctx.createAccount(), 'admin');
    const agent = await ctx.createUser(admin.accountId, 'agent');
    for (const url of [`/webhooks/${id}/invocations`, `/webhooks/${id}/invocations/${invocation.id}/attempts`]) {
      expect((await rest('GET', url, undefined, stranger)).statusCode).toBe(404);
      expect((await rest('GET', url, undefined, agent)).statusCode).toBe(403);
    }
    await rest('DELETE', `/webhooks/${id}`);
  });

  it('400: one attempt, failed for good; Retry-After: 1 is honoured', async () => {
    const refused = await open([{ status: 400, body: 'no' }]);
    const slow = await open([{ status: 429, headers: { 'retry-after': '1' } }, { status: 200 }]);
    const a = await hook(refused.url);
    const b = await hook(slow.url);
    await createClient();
    await until(async () => (await invocations(a.id))[0]?.status === 'failed' && (await invocations(b.id))[0]?.status === 'success', 8000);
    expect(refused.received).toHaveLength(1);
    expect((await invocations(a.id))[0]).toMatchObject({ attempts: 1, reason: 'HTTP 400' });
    expect(slow.received[1].at - slow.received[0].at).toBeGreaterThanOrEqual(1000);
    for (const h of [a, b]) await rest('DELETE', `/webhooks/${h.id}`);
  });

  it("the README's receiver (examples/webhook-receiver.mjs) verifies a delivery and refuses a forged or replayed request", async () => {
    const r = await open(); // only to create the webhook; its endpoint then moves to the example
    const { id, secret } = await hook(r.url);
    const example = spawn(process.execPath, ['examples/webhook-receiver.mjs'], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: '0' } });
    const lines: string[] = [];
    createInterface({ input: example.stdout }).on('line', (line) => lines.push(line));
    try {
      await until(() => lines.some((l) => l.startsWith('listening on ')));
      const endpoint = lines[0].replace('listening on ', '');
      expect((await rest('PATCH', `/webhooks/${id}`, { webhook: { endpoint } })).statusCode).toBe(204);
      const client = await createClient('Seen by the example');
      await until(() => lines.some((l) => l.startsWith('verified')));
      const [invocation] = await invocations(id);
      expect(lines).toContain(`verified ${CREATED} zen:oauth_client:${client.id} (${invocation.id})`);
      await until(async () => (await invocations(id))[0].status === 'success');

      const body = JSON.stringify({ type: CREATED, subject: 'zen:oauth_client:1' });
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const signed = (at: string, key: string) => ({ 'x-zendesk-webhook-signature': createHmac('sha256', key).update(at + body).digest('base64'), 'x-zendesk-webhook-signature-timestamp': at });
      const stale = new Date(Date.now() - 10 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      for (const headers of [signed(now, 'not the secret'), signed(stale, secret), {}]) {
        expect((await fetch(endpoint, { method: 'POST', headers, body })).status).toBe(401);
      }
      expect(lines.filter((l) => l.startsWith('refused'))).toHaveLength(3);
      expect((await fetch(endpoint, { method: 'POST', headers: signed(now, secret), body })).status).toBe(200);
    } finally {
      example.kill();
      await rest('DELETE', `/webhooks/${id}`);
    }
  });

  it('after HASH_KEY changed, the secret answers 409 saying to reset it, a delivery ends without a request, and a reset mends both', async () => {
    const r = await open();
    const { id } = await hook(r.url);
    // the stored secret as a service with another HASH_KEY sealed it: what this one sees after a key change
    const [{ account_id }] = await ctx.db.sql<{ account_id: string }>('SELECT account_id FROM webhooks WHERE id = $1', [id]);
    const foreign = new SigningSecretBox(Buffer.from('the-hash-key-before-the-change-0123456789')).seal(BigInt(account_id), 'an old secret');
    await ctx.db.sql('UPDATE webhooks SET signing_secret = $1 WHERE id = $2', [foreign, id]);
    const advice = `The signing secret of webhook ${id} cannot be read: HASH_KEY changed since it was made. Reset it (POST /api/v2/webhooks/${id}/signing_secret) and give the receiver the new one`;

    const shown = await rest('GET', `/webhooks/${id}/signing_secret`);
    expect([shown.statusCode, shown.json()]).toEqual([409, { error: 'Conflict', description: advice }]);
    const tested = await rest('POST', `/webhooks/${id}/test`);
    expect([tested.statusCode, tested.json()]).toEqual([409, { error: 'Conflict', description: advice }]);
    const gql = await ctx.inject({ method: 'POST', url: '/graphql', headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload: { query: `{ webhookSigningSecret(id: "${id}") { secret } }` } });
    expect(gql.json().errors).toEqual([expect.objectContaining({ message: advice, extensions: { code: 'CONFLICT' } })]);

    await createClient('Unsigned');
    await until(async () => (await invocations(id))[0]?.status === 'failed');
    expect((await invocations(id))[0]).toMatchObject({ attempts: 0, reason: advice });
    expect(r.received).toHaveLength(0);
    expect(ctx.logs.join('\n')).not.toContain('an old secret');

    const reset = await rest('POST', `/webhooks/${id}/signing_secret`);
    expect(reset.statusCode).toBe(201);
    const secret = reset.json().signing_secret.secret as string;
    expect((await rest('GET', `/webhooks/${id}/signing_secret`)).json().signing_secret.secret).toBe(secret);
    await createClient('Signed again');
    await until(() => r.received.length === 1);
    expect(new Webhook(standardWebhooksSecret(secret)).verify(r.received[0].body, r.received[0].headers as Record<string, string>)).toMatchObject({ detail: { name: 'Signed again' } });
    await rest('DELETE', `/webhooks/${id}`);
  });

  it('POST /webhooks/{id}/test sends a signed test event now and answers what the receiver said; another account 404, an agent 403', async () => {
    const r = await open([{ status: 418, body: 'teapot '.repeat(300) }]);
    const { id, secret } = await hook(r.url, { status: 'inactive' });
    const res = await rest('POST', `/webhooks/${id}/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ response: { status: 418, body: 'teapot '.repeat(300).slice(0, 1024), error: null } });
    expect(r.received).toHaveLength(1);
    const payload = new Webhook(standardWebhooksSecret(secret)).verify(r.received[0].body, r.received[0].headers as Record<string, string>) as Record<string, any>;
    expect(payload).toMatchObject({ type: 'zen:event-type:webhook.test', subject: `zen:webhook:${id}`, detail: { id } });
    // nothing recorded
    expect(await invocations(id)).toEqual([]);
    const stranger = await ctx.createUser(await ctx.createAccount(), 'admin');
    expect((await rest('POST', `/webhooks/${id}/test`, undefined, stranger)).statusCode).toBe(404);
    expect((await rest('POST', `/webhooks/${id}/test`, undefined, await ctx.createUser(admin.accountId, 'agent'))).statusCode).toBe(403);
    expect(r.received).toHaveLength(1);
    await rest('DELETE', `/webhooks/${id}`);
  });

  it('the production guard refuses, at send time, an endpoint that now points at a private address', async () => {
    const strict = await createTestApp({ webhookAllowPrivateEndpoints: false });
    closers.push(() => strict.close());
    const r = await open();
    const owner = await strict.createUser(await strict.createAccount(), 'admin');
    const created = await strict.inject({
      method: 'POST', url: '/api/v2/webhooks', headers: { authorization: owner.basic, 'content-type': 'application/json' },
      payload: { webhook: { name: 'Public', endpoint: 'https://1.1.1.1/hook', http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [CREATED] } },
    });
    expect(created.statusCode).toBe(201);
    // what a name that resolves elsewhere later amounts to: the endpoint reaches a loopback receiver
    await strict.db.sql('UPDATE webhooks SET endpoint = $1 WHERE id = $2', [r.url, created.json().webhook.id]);
    const res = await strict.inject({ method: 'POST', url: `/api/v2/webhooks/${created.json().webhook.id}/test`, headers: { authorization: owner.basic } });
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toMatchObject({ status: null, body: null, error: expect.stringMatching(/127\.0\.0\.1/) });
    expect(r.received).toHaveLength(0);
  });

  it('10 failures in a row pause the webhook (deliveries wait); a successful probe closes it', async () => {
    let healthy = false;
    const answers: number[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        answers.push(healthy ? 200 : 500);
        res.writeHead(healthy ? 200 : 500).end();
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    closers.push(() => new Promise<void>((ok) => server.close(() => ok())));
    const { id } = await hook(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await createClient();
    await until(async () => (await ctx.db.sql<{ p: Date | null }>('SELECT paused_until AS p FROM webhooks WHERE id = $1', [id]))[0].p !== null, 8000);
    const count = answers.length;
    expect(count).toBe(10);
    // the 10th attempt was the first delivery's last: it failed; the next one waits for the pause (a minute)
    expect((await invocations(id))[0]).toMatchObject({ status: 'failed', attempts: 10 });
    await createClient('While paused');
    await new Promise((ok) => setTimeout(ok, 500));
    expect(answers.length).toBe(count);
    // the pause ends (moved into the past here), the receiver recovered: one probe succeeds and closes the breaker
    healthy = true;
    await ctx.db.sql("UPDATE webhooks SET paused_until = now() - interval '1 second' WHERE id = $1", [id]);
    // (the waiting delivery was told to come back when the pause ends: that time, too, is now)
    await ctx.db.sql("UPDATE jobs SET run_at = now() WHERE kind = 'webhook.deliver' AND dead_at IS NULL");
    await until(async () => (await invocations(id))[1]?.status === 'success', 8000);
    const [row] = await ctx.db.sql<{ p: Date | null; n: number; s: Date | null }>('SELECT paused_until AS p, consecutive_failures AS n, failing_since AS s FROM webhooks WHERE id = $1', [id]);
    expect(row).toEqual({ p: null, n: 0, s: null });
    expect(answers).toEqual([...Array(10).fill(500), 200]);
  });
});
