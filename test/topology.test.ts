import http from 'node:http';
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { runLoad, type LoadResult } from '../bench/load';
import { basicHeader } from './helpers/test-app';
import { ROOT } from './helpers/processes';
import { describeIf } from './helpers/skip';
import { startTopology, type Topology } from './helpers/topology';

// Issue 28: the service as it runs in production — several processes behind pgbouncer in
// transaction mode, beside a streaming replica (scripts/topology.sh, docs/scaling.md). Two web
// processes (--no-worker) and a worker (--worker-only) started at the same moment, every
// answer checked as a user sees it, then the failures a deployment lives through: a web
// process killed, pgbouncer restarted, the replica stopped, the primary restarted.
// Opt-in (TOPOLOGY_TEST=1): CI runs it in a step of its own; about 40 s.

jest.setTimeout(120_000);

const PHONE = '+12518717081';
const CLIENT_CREATED = 'zen:event-type:oauth_client.created';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeIf(
  process.env.TOPOLOGY_TEST === '1',
  'needs-topology',
  'TOPOLOGY_TEST is not 1: it starts PostgreSQL, a replica, pgbouncer and three service processes (scripts/topology.sh)',
)('the service behind pgbouncer (transaction mode) beside a read replica, as several processes', () => {
  let topology: Topology;
  let a: string;
  let b: string;
  let admin: string;
  /** an admin Bearer token (read write): no password verification per request */
  let bearer: string;
  let receiver: http.Server;
  /** webhook deliveries: the event envelope, and its webhook-id header */
  const deliveries: { event: { id: string; type: string; subject: string }; webhookId: string }[] = [];

  const request = async (base: string, method: string, url: string, authorization: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
  };
  /** a request that must succeed (2xx): its body */
  const ok = async (base: string, method: string, url: string, authorization: string, body?: unknown) => {
    const res = await request(base, method, url, authorization, body);
    if (res.status >= 300) throw new Error(`${method} ${base}${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body!;
  };
  const currentToken = (base: string, token = bearer) => fetch(`${base}/api/v2/oauth/tokens/current.json`, { headers: { authorization: token } });
  const bearerLoad = (base: string, connections: number, durationSeconds: number): Promise<LoadResult> =>
    runLoad({ origin: base, method: 'GET', path: '/api/v2/oauth/tokens/current.json', headers: { authorization: bearer }, connections, pipelining: 1, durationSeconds });
  const readyz = async (base: string) => {
    const res = await fetch(`${base}/readyz`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  /** polls until every web process answers the Bearer request 200; the time it took (ms) */
  const untilServing = async (withinMs: number) => {
    const started = Date.now();
    for (;;) {
      const statuses = await Promise.all([a, b].map((base) => currentToken(base).then((r) => r.status, () => 0)));
      if (statuses.every((s) => s === 200)) return Date.now() - started;
      if (Date.now() - started > withinMs) throw new Error(`not serving again within ${withinMs} ms (last statuses ${statuses.join(', ')})`);
      await sleep(100);
    }
  };
  /**
   * A drill's answers other than 200 and 503 (none expected), with, when there are some, the
   * errors the web processes logged (level error and above: a 500's cause), to say why.
   */
  const unexpectedAnswers = (statuses: Record<number, number>) => {
    const answers = Object.keys(statuses).filter((s) => s !== '200' && s !== '503');
    const logged = new Set<string>();
    if (answers.length) {
      for (const line of `${topology.log('web1')}\n${topology.log('web2')}`.split('\n')) {
        const entry = line.startsWith('{') ? (JSON.parse(line) as { level: number; msg?: string; err?: { code?: string; message?: string } }) : undefined;
        if (entry && entry.level >= 50) logged.add(`${entry.msg}: ${entry.err?.code ?? ''} ${entry.err?.message ?? ''}`);
      }
    }
    return { answers, logged: [...logged] };
  };
  /** `n` Bearer requests on each web process, 10 at a time: their statuses */
  const burst = async (n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i += 10) {
      statuses.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => currentToken(j % 2 ? b : a).then((r) => r.status)))));
    }
    return statuses;
  };
  /**
   * GET `path` with the Bearer token in a loop, two loops per web process, until stop():
   * how many answers of each status (a request that got no answer counts as 0).
   */
  const poll = (path: string) => {
    const statuses: Record<number, number> = {};
    let polling = true;
    const loop = async (base: string) => {
      while (polling) {
        const status = await fetch(`${base}${path}`, { headers: { authorization: bearer } }).then(
          async (res) => {
            await res.arrayBuffer();
            return res.status;
          },
          () => 0,
        );
        statuses[status] = (statuses[status] ?? 0) + 1;
        await sleep(10);
      }
    };
    const loops = [a, b, a, b].map(loop);
    const count = () => Object.values(statuses).reduce((x, y) => x + y, 0);
    return {
      count,
      async stop() {
        polling = false;
        await Promise.all(loops);
        return statuses;
      },
    };
  };

  beforeAll(async () => {
    topology = await startTopology();
    [a, b] = topology.web;
    admin = basicHeader(topology.env.ADMIN_EMAIL, topology.env.ADMIN_PASSWORD);
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        deliveries.push({ event: JSON.parse(Buffer.concat(chunks).toString('utf8')), webhookId: String(req.headers['webhook-id']) });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  }, 200_000);

  afterAll(async () => {
    await topology?.stop();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  }, 120_000);

  it('three processes started together all become ready; the migrations ran once, the others waited for the lock', async () => {
    console.log(`topology started in ${(topology.startMs / 1000).toFixed(1)} s`);
    for (const base of [a, b]) {
      const { status, body } = await readyz(base);
      expect(status).toBe(200);
      // web-only: the jobs run in the worker alone
      expect(body.jobs.worker).toBe(false);
    }
    expect(topology.log('worker')).toContain('worker started');

    const primary = new pg.Client({ connectionString: topology.env.PRIMARY_URL });
    await primary.connect();
    try {
      const { rows } = await primary.query<{ migration_name: string; n: number }>(
        'SELECT migration_name, count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL GROUP BY migration_name ORDER BY 1',
      );
      const expected = readdirSync(path.join(ROOT, 'prisma/migrations')).filter((name) => /^\d{14}_/.test(name)).sort();
      expect(rows).toEqual(expected.map((migration_name) => ({ migration_name, n: 1 })));
    } finally {
      await primary.end();
    }

    const logs = (['web1', 'web2', 'worker'] as const).map((name) => ({ name, log: topology.log(name) }));
    const migrated = logs.filter((p) => p.log.includes('applied migrations'));
    expect(migrated.map((p) => p.name)).toHaveLength(1);
    // a process that found the lock taken says so (none may have, if one was that much faster)
    const waited = logs.filter((p) => p.log.includes('migration lock'));
    console.log(`migrated: ${migrated[0].name}; waited for the migration lock: ${waited.map((p) => p.name).join(', ') || 'none'}`);
    expect(waited.map((p) => p.name)).not.toContain(migrated[0].name);
  });

  it('50 connections of Bearer load over both web processes for 5 s: every answer 200', async () => {
    const client = await ok(a, 'POST', '/api/v2/oauth/clients', admin, { name: 'Topology', scopes: 'read write', redirect_uris: 'https://topology.example/cb' });
    const created = await ok(a, 'POST', '/api/v2/oauth/tokens', admin, { token: { client_id: client.id, scopes: ['read', 'write'] } });
    bearer = `Bearer ${created.token.token}`;

    const results = await Promise.all([bearerLoad(a, 25, 5), bearerLoad(b, 25, 5)]);
    console.log(`Bearer load: ${results.map((r, i) => `web ${i + 1} ${r.ok} × 200 (${Math.round(r.rps)}/s, p99 ${r.p99.toFixed(1)} ms)`).join('; ')}`);
    for (const r of results) {
      expect(r.ok).toBeGreaterThan(0);
      expect({ non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, statusCodes: r.statusCodes }).toEqual({ non2xx: 0, errors: 0, timeouts: 0, statusCodes: { 200: r.ok } });
    }
  });

  it('100 concurrent callback requests across both processes: exactly 30 accepted, 70 refused', async () => {
    const phone = await ok(a, 'POST', '/api/v2/channels/voice/phone_numbers', admin, { phone_number: { number: PHONE } });
    const create = (base: string) =>
      fetch(`${base}/api/v2/channels/voice/callback_requests`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: admin },
        body: JSON.stringify({ callback_request: { phone_number_id: phone.phone_number.id, requester_phone_number: '+4915123456789' } }),
      });
    // one Basic verification per process up front, so that the burst measures the limit, not scrypt
    for (const base of [a, b]) expect((await request(base, 'GET', '/api/v2/users/me.json', admin)).status).toBe(200);

    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => create(i % 2 ? b : a)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(70);
    const remaining = responses.filter((r) => r.status === 201).map((r) => Number(r.headers.get('x-rate-limit-remaining')));
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const list = await ok(b, 'GET', '/api/v2/channels/voice/callback_requests.json', bearer);
    expect(list.callback_requests).toHaveLength(30);
  });

  it('a token revoked on one process fails on the other at once; a client created on one is shown by the other at once (20 × each)', async () => {
    const client = await ok(a, 'GET', '/api/v2/oauth/clients.json', bearer);
    const clientId = (client as unknown as { id: number }[])[0].id;
    for (let i = 0; i < 20; i++) {
      const created = await ok(a, 'POST', '/api/v2/oauth/tokens', bearer, { token: { client_id: clientId, scopes: ['read'] } });
      const token = `Bearer ${created.token.token}`;
      expect((await currentToken(b, token)).status).toBe(200);
      expect((await request(a, 'DELETE', `/api/v2/oauth/tokens/${created.token.id}`, bearer)).status).toBe(204);
      expect((await currentToken(b, token)).status).toBe(401);
    }
    for (let i = 0; i < 20; i++) {
      const created = await ok(a, 'POST', '/api/v2/oauth/clients', bearer, { name: `Shown ${i}`, scopes: 'read', redirect_uris: 'https://shown.example/cb' });
      const shown = await request(b, 'GET', `/api/v2/oauth/clients/${created.id}.json`, bearer);
      expect(shown.status).toBe(200);
      expect(shown.body).toMatchObject({ id: created.id, name: `Shown ${i}` });
      const list = await ok(b, 'GET', '/api/v2/oauth/clients.json', bearer);
      expect((list as unknown as { id: number }[]).map((c) => c.id)).toContain(created.id);
    }
  });

  it('60 changes made on both processes with a webhook subscribed: each event delivered exactly once, by the worker', async () => {
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await ok(a, 'POST', '/api/v2/webhooks', bearer, { webhook: { name: 'Clients', endpoint, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [CLIENT_CREATED] } });
    const ids: number[] = [];
    for (let i = 0; i < 60; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          ok((i + j) % 2 ? b : a, 'POST', '/api/v2/oauth/clients', bearer, { name: `Event ${i + j}`, scopes: 'read', redirect_uris: 'https://events.example/cb' }),
        ),
      );
      ids.push(...batch.map((c) => c.id as number));
    }
    const until = Date.now() + 30_000;
    while (deliveries.length < 60 && Date.now() < until) await sleep(100);
    // a moment for a late duplicate to show
    await sleep(1000);
    const events = deliveries.filter((d) => d.event.type === CLIENT_CREATED);
    expect(events).toHaveLength(60);
    expect(new Set(events.map((d) => d.event.id)).size).toBe(60);
    expect(new Set(events.map((d) => d.webhookId)).size).toBe(60);
    expect(events.map((d) => d.event.subject).sort()).toEqual(ids.map((id) => `zen:oauth_client:${id}`).sort());
  });

  it('the replica stopped while the audit log is read through both processes: no read fails, and reads go on after it is back', async () => {
    // the replica takes the reads before the drill (each process's /readyz says so)
    const usable = async (want: boolean, withinMs: number) => {
      const until = Date.now() + withinMs;
      for (;;) {
        const states = await Promise.all([a, b].map(async (base) => (await readyz(base)).body.replicas?.[0]?.usable));
        if (states.every((s) => s === want)) return;
        if (Date.now() > until) throw new Error(`replica usable: ${states.join(', ')} (wanted ${want} within ${withinMs} ms)`);
        await sleep(100);
      }
    };
    await usable(true, 10_000);

    const reads = poll('/api/v2/audit_logs.json?page[size]=20');
    await sleep(500);
    await topology.drill('stop-replica');
    await usable(false, 10_000);
    const whileDown = reads.count();
    await sleep(1000);
    await topology.drill('start-replica');
    await usable(true, 15_000);
    await sleep(1000);
    const statuses = await reads.stop();
    const total = reads.count();
    console.log(`audit log reads during the replica drill: ${total} (${total - whileDown} after the replica was seen down)`);
    expect(statuses).toEqual({ 200: total });
    expect(total - whileDown).toBeGreaterThan(0);
  });

  it('web 1 killed under Bearer load: web 2 keeps answering 200; started again, it serves', async () => {
    const load = Promise.all([bearerLoad(a, 20, 4), bearerLoad(b, 20, 4)]);
    await sleep(1500);
    await topology.drill('kill-web', '1');
    const [, survivor] = await load;
    console.log(`after kill -9 of web 1: web 2 answered ${survivor.ok} × 200, ${survivor.non2xx} other, ${survivor.errors} errors`);
    expect(survivor.ok).toBeGreaterThan(0);
    expect({ non2xx: survivor.non2xx, errors: survivor.errors, timeouts: survivor.timeouts }).toEqual({ non2xx: 0, errors: 0, timeouts: 0 });
    await topology.drill('start-web', '1');
    expect((await currentToken(a)).status).toBe(200);
  });

  // While the database cannot be reached, an answer is 503 ServiceUnavailable (docs/api.md), never a 500.
  it('pgbouncer restarted: 503 while it is away, never a 500; the service reconnects by itself within seconds, then no 500', async () => {
    const during = poll('/api/v2/oauth/tokens/current.json');
    await sleep(300);
    await topology.drill('restart-pooler');
    const ms = await untilServing(5_000);
    const statuses = await during.stop();
    console.log(`serving again ${ms} ms after pgbouncer was back; answers during the drill: ${JSON.stringify(statuses)}`);
    expect(unexpectedAnswers(statuses)).toEqual({ answers: [], logged: [] });
    expect((await burst(100)).filter((s) => s !== 200)).toEqual([]);
  });

  it('the primary restarted (pg_ctl stop -m fast, start): 503 while it is away, never a 500; the service recovers within 10 s, then no 500, and the worker delivers again', async () => {
    const before = deliveries.length;
    const during = poll('/api/v2/oauth/tokens/current.json');
    await sleep(300);
    await topology.drill('restart-primary');
    const ms = await untilServing(10_000);
    const statuses = await during.stop();
    console.log(`serving again ${ms} ms after the primary was back; answers during the drill: ${JSON.stringify(statuses)}`);
    expect(ms).toBeLessThan(10_000);
    expect((await burst(100)).filter((s) => s !== 200)).toEqual([]);
    for (const base of [a, b]) expect((await readyz(base)).status).toBe(200);
    // the worker reconnected too: a change made now is delivered
    const created = await ok(b, 'POST', '/api/v2/oauth/clients', bearer, { name: 'After the restart', scopes: 'read', redirect_uris: 'https://events.example/cb' });
    const until = Date.now() + 15_000;
    while (!deliveries.slice(before).some((d) => d.event.subject === `zen:oauth_client:${created.id}`) && Date.now() < until) await sleep(100);
    expect(deliveries.slice(before).map((d) => d.event.subject)).toEqual([`zen:oauth_client:${created.id}`]);
    // last: what a user saw while the primary was away (checked after the recovery, so that both are reported)
    expect(unexpectedAnswers(statuses)).toEqual({ answers: [], logged: [] });
  });
});
