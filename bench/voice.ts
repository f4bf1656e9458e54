// `npm run bench:voice` (and the end of `npm run bench`) — the callback lifecycle (issue 23;
// docs/api.md, "The callback lifecycle") on PostgreSQL, against the service as a built
// production process (NODE_ENV=production), on a database of its own:
//
//   1. offer latency: an agent away, a request queued, the agent comes online (PUT
//      availability); the time from sending the PUT to the callback_request.offered event
//      received by a graphql-ws subscriber of accountEvents, one of callbackRequestUpdated,
//      and a webhook receiver on 127.0.0.1. The offer commits in the PUT's transaction, so the
//      subscribers measure commit → NOTIFY → the process's feed → the socket. Repeated;
//      median and p95 of each path. Target: ≤ 50 ms median.
//   2. dispatch throughput: R queued requests (inserted in SQL: the API allows 30 per account
//      per window) and A agents of the request's group coming online at once (A concurrent
//      PUTs), then each accepting and answering every offer it gets (an offered event, read
//      from one accountEvents subscription, sends the agent's POST accept then POST outcome
//      answered): offers per second from the first PUT to the last completion (events, and
//      the history rows' own timestamps as a check). Median over the runs.
//   3. queue read: GET /api/v2/channels/voice/callback_requests?status=queued&page[size]=100
//      (100 queued rows of 1,000, with history, queue positions and the wait estimate) under
//      autocannon at each load, alternated round after round with the bench's list floor
//      (bench/references/list-floor.ts at scenario 4a's request, on this database). Target:
//      ≥ 0.60 × the list floor at each load.
//
// The queue read runs before the dispatch runs, on a quiet service (dispatch is the heaviest writer).
//
//   npm run bench:voice                full (50 offers, 1,000 requests × 100 agents × 3 runs, 3 rounds of 5 s; ~2.5 min)
//   npm run bench:voice -- --quick     fewer (about a minute)
//   npm run bench:voice -- --smoke     tiny, judges nothing (CI's bench smoke test)
//   options: --out DIR (default bench/results): voice.json and voice.md; --only latency,queue,dispatch (some of them)
// BENCH_DATABASE_URL: a server to make a database of its own on (else a throwaway PostgreSQL).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { createDb } from '../src/db/create-db';
import { migrate } from '../src/db/migrate';
import type { LoadResult, LoadSpec } from './load';
import { sleep } from './net';
import { runLoader, startServer, throwawayPostgres, type Server } from './processes';
import { benchMain, type BenchMode } from './cli';
import { hmac, REQUESTER_PHONE } from './seed';
import { median } from './stats';

const ROOT = path.resolve(__dirname, '../..');
const EVENT = (name: string) => `zen:event-type:callback_request.${name}`;
export const QUEUE_PATH = '/api/v2/channels/voice/callback_requests?status=queued&page%5Bsize%5D=100';
/** scenario 4a's request (bench/run.ts): what the list floor answers */
export const LIST_FLOOR_PATH = '/api/v2/oauth/tokens.json?page%5Bsize%5D=100';

export const VOICE_TARGETS = {
  offerLatencyMs: { max: 50, text: '≤ 50 ms median' },
  queueReadVsListFloor: { min: 0.6, text: '≥ 0.60 × list floor' },
};

interface Options {
  mode: BenchMode;
  /** timed offers (after a few untimed ones) */
  offers: number;
  agents: number;
  requests: number;
  dispatchRuns: number;
  /** a dispatch run stops here even if requests are left */
  dispatchLimitSeconds: number;
  /** queued requests of the queue-read account */
  queued: number;
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number[];
  pool: number;
  /** the measurements to run (all by default) */
  parts: Set<Part>;
  out: string;
}

const PARTS = ['latency', 'queue', 'dispatch'] as const;
type Part = (typeof PARTS)[number];

/** The measurements' sizes in each mode (npm run bench passes its own mode and folder). */
export function voiceOptions(mode: Options['mode'], out: string): Options {
  const preset = {
    full: { offers: 50, agents: 100, requests: 1000, dispatchRuns: 3, dispatchLimitSeconds: 60, queued: 1000, rounds: 3, durationSeconds: 5, warmupSeconds: 2 },
    quick: { offers: 30, agents: 100, requests: 1000, dispatchRuns: 1, dispatchLimitSeconds: 60, queued: 1000, rounds: 2, durationSeconds: 2, warmupSeconds: 1 },
    smoke: { offers: 5, agents: 10, requests: 50, dispatchRuns: 1, dispatchLimitSeconds: 30, queued: 150, rounds: 1, durationSeconds: 1, warmupSeconds: 0.3 },
  }[mode];
  return { mode, ...preset, connections: [10, 50], pool: 10, parts: new Set(PARTS), out };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const spread = (xs: number[]) => ({ p50: median(xs), p95: quantile(xs, 0.95), max: Math.max(...xs) });

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

// ---------------------------------------------------------------- seed

interface Agent {
  id: string;
  bearer: string;
}

interface Tenant {
  accountId: string;
  admin: Agent;
  agents: Agent[];
  phoneId: string;
  groupId: string;
}

/**
 * An account written straight into the database (as bench/seed.ts does): an admin, `agents`
 * agents in one group, an OAuth client, a Bearer token (read write) for each of them and
 * `extraTokens` more of the admin's, and a voice phone number that takes callbacks.
 */
export async function seedTenant(client: pg.Client, hashKey: string, name: string, agents: number, extraTokens = 0): Promise<Tenant> {
  const one = async (text: string, params: unknown[]) => (await client.query(text, params)).rows[0] as Record<string, string>;
  // offers expire after 10 minutes: no expiry timer of an answered offer (a no-op decision) runs during a later measurement
  const { id: accountId } = await one('INSERT INTO accounts (name, callback_offer_timeout) VALUES ($1, 600) RETURNING id::text AS id', [name]);
  const users = (
    await client.query<{ id: string; n: number }>(
      `INSERT INTO users (account_id, name, email, email_key, role, password_hash)
       SELECT $1, CASE WHEN g = 0 THEN 'Admin' ELSE 'Agent ' || g END, e, e, (CASE WHEN g = 0 THEN 'admin' ELSE 'agent' END)::"UserRole", 'x'
         FROM generate_series(0, $2::int) g, LATERAL (SELECT 'user' || g || '@' || $3::text || '.voice.example.com' AS e) x
        ORDER BY g
       RETURNING id::text AS id, substring(email from 'user(\\d+)@')::int AS n`,
      [accountId, agents, name],
    )
  ).rows.sort((a, b) => a.n - b.n);
  const { id: clientId } = await one(
    `INSERT INTO oauth_clients (account_id, name, identifier, scopes, redirect_uris) VALUES ($1, 'Voice bench', $2, 'read write', ARRAY['https://bench.example.com/cb']) RETURNING id::text AS id`,
    [accountId, `voice-bench-${name}`],
  );
  const text = (i: number) => `voice${name}${String(i).padStart(12, '0')}`;
  // token i belongs to user i (the admin is user 0); the extra ones are the admin's
  const owners = [...users.map((u) => u.id), ...Array.from({ length: extraTokens }, () => users[0].id)];
  await client.query(
    `INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes)
     SELECT $1, $2, u, h, left(t, 10), ARRAY['read', 'write'] FROM unnest($3::bigint[], $4::text[], $5::text[]) AS x(u, h, t)`,
    [accountId, clientId, owners, owners.map((_, i) => hmac(hashKey, text(i))), owners.map((_, i) => text(i))],
  );
  const { id: phoneId } = await one(`INSERT INTO voice_phone_numbers (account_id, number, callback_enabled) VALUES ($1, '+14155550100', true) RETURNING id::text AS id`, [accountId]);
  const { id: groupId } = await one(`INSERT INTO groups (account_id, name) VALUES ($1, 'Callbacks') RETURNING id::text AS id`, [accountId]);
  await client.query(`INSERT INTO group_memberships (account_id, user_id, group_id) SELECT $1, u, $2 FROM unnest($3::bigint[]) u`, [accountId, groupId, users.slice(1).map((u) => u.id)]);
  const who = (i: number): Agent => ({ id: users[i].id, bearer: `Bearer ${text(i)}` });
  return { accountId, admin: who(0), agents: users.slice(1).map((_, i) => who(i + 1)), phoneId, groupId };
}

/** `count` queued requests of the tenant's number for its group, as create_callback_request stores them (without its rate window); their ids. */
async function queueRequests(client: pg.Client, t: Tenant, count: number): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO callback_requests (account_id, phone_number_id, requester_phone_number, requested_group_ids, routed_group_ids, status, created_by_id)
     SELECT $1, $2, $3, ARRAY[$4::bigint], ARRAY[$4::bigint], 'queued', $5 FROM generate_series(1, $6::int) g ORDER BY g
     RETURNING id::text AS id`,
    [t.accountId, t.phoneId, REQUESTER_PHONE, t.groupId, t.admin.id, count],
  );
  return rows.map((r) => r.id);
}

/**
 * The queue-read account's data: `queued` requests, every third offered once and missed
 * (history: offered, queued), and 20 completed ones (history: offered, accepted, dialing,
 * completed; 90 s of handling) so that the wait estimate has figures; two agents online and
 * on a call, so that nothing routes while the list is read.
 */
export async function seedQueue(client: pg.Client, t: Tenant, queued: number): Promise<void> {
  const done = await queueRequests(client, t, 20);
  const [a, b] = t.agents;
  await client.query(
    `UPDATE callback_requests SET status = 'completed', agent_id = $2, attempts = 1, dialing_at = now() - interval '100 seconds',
            completed_at = now() - interval '10 seconds', updated_at = now() - interval '10 seconds' WHERE id = ANY($1::bigint[])`,
    [done, a.id],
  );
  await client.query(
    `INSERT INTO callback_request_history (account_id, callback_request_id, status, agent_id, reason, at)
     SELECT $1, r, s.status::"CallbackRequestStatus", $3, s.reason, now() - s.ago * interval '1 second'
       FROM unnest($2::bigint[]) r, (VALUES ('offered', NULL, 105), ('accepted', NULL, 101), ('dialing', NULL, 100), ('completed', 'answered', 10)) s(status, reason, ago)
      ORDER BY r, s.ago DESC`,
    [t.accountId, done, a.id],
  );
  const ids = await queueRequests(client, t, queued);
  const missed = ids.filter((_, i) => i % 3 === 0);
  await client.query(
    `INSERT INTO callback_request_history (account_id, callback_request_id, status, agent_id, reason, at)
     SELECT $1, r, s.status::"CallbackRequestStatus", $3, s.reason, now() - s.ago * interval '1 second'
       FROM unnest($2::bigint[]) r, (VALUES ('offered', NULL, 60), ('queued', 'missed', 30)) s(status, reason, ago)
      ORDER BY r, s.ago DESC`,
    [t.accountId, missed, b.id],
  );
  await client.query(`UPDATE callback_requests SET updated_at = now() - interval '30 seconds', offer_seq = 1 WHERE id = ANY($1::bigint[])`, [missed]);
  // made before their history began
  await client.query(`UPDATE callback_requests SET created_at = now() - interval '5 minutes' WHERE account_id = $1`, [t.accountId]);
  await client.query(
    `INSERT INTO agent_availabilities (account_id, user_id, agent_state, call_status, via, online_since) SELECT $1, u, 'online', 'on_call', 'client', now() FROM unnest($2::bigint[]) u`,
    [t.accountId, [a.id, b.id]],
  );
}

// ---------------------------------------------------------------- clients

interface Answer {
  status: number;
  body: Record<string, any>;
  location?: string;
}

async function api(server: Server, method: string, url: string, bearer: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server.origin}/api/v2${url}`, {
    method, headers: { authorization: bearer, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {}, location: res.headers.get('location') ?? undefined };
}

async function ok(server: Server, method: string, url: string, bearer: string, body?: unknown, status = 200): Promise<Answer> {
  const a = await api(server, method, url, bearer, body);
  if (a.status !== status) throw new Error(`${method} ${url}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
  return a;
}

const availability = (server: Server, agent: Agent, state: 'online' | 'away' | 'offline') =>
  ok(server, 'PUT', `/channels/voice/availabilities/${agent.id}`, agent.bearer, { availability: { agent_state: state } });

/** A graphql-ws client connected to the service, and a subscription on it; resolves once connected. */
async function subscriber(server: Server, bearer: string, query: string, next: (data: Record<string, any>) => void): Promise<Client> {
  const client = createClient({
    url: `${server.origin.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: bearer }, retryAttempts: 0, lazy: false, onNonLazyError: () => {},
  });
  await new Promise<void>((resolve, reject) => {
    const off = client.on('connected', () => (off(), resolve()));
    client.on('closed', (e) => reject(new Error(`subscriber closed: ${(e as { reason?: string }).reason ?? ''}`)));
  });
  client.subscribe({ query }, {
    next: (r) => r.data && next(r.data as Record<string, any>),
    error: (err) => console.error(`subscription ${query.slice(0, 60)}: ${JSON.stringify(err)}`),
    complete: () => {},
  });
  return client;
}

/** A webhook receiver that answers 200 at once and notes when each callback request's delivery came. */
async function receiver() {
  const arrived = new Map<string, number>();
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      const id = /callback_request:(\d+)/.exec(body)?.[1];
      if (id && !arrived.has(id)) arrived.set(id, performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/talk`,
    arrived,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

// ---------------------------------------------------------------- report

interface Spread {
  p50: number;
  p95: number;
  max: number;
}

interface DispatchRun {
  offered: number;
  completed: number;
  failed: number;
  seconds: number;
  offersPerSecond: number;
  completedPerSecond: number;
  /** the history rows' view: offered rows of the run's requests over their first-to-last span */
  historyOffered: number;
  historyOffersPerSecond: number;
  /** requests offered more than once (a missed or rescinded offer) */
  reoffered: number;
}

interface QueueCell {
  key: 'queue' | 'list-floor';
  round: number;
  connections: number;
  result: LoadResult;
  sqlPerRequest?: number;
}

export interface VoiceReport {
  meta: { date: string; mode: Options['mode']; judged: boolean; node: string; cpus: string; postgres: string; pool: number; totalSeconds: number };
  /** absent: not measured (--only) */
  latency?: { offers: number; put: Spread; accountEvents: Spread; callbackRequestUpdated: Spread; webhook: Spread };
  dispatch?: { agents: number; requests: number; runs: DispatchRun[]; offersPerSecond: number; completedPerSecond: number };
  queueRead?: {
    queued: number;
    rows: number;
    rounds: number;
    durationSeconds: number;
    loads: { connections: number; rps: number; p50: number; p99: number; listFloorRps: number; listFloorP50: number; vsListFloor: number; sqlPerRequest: number; non2xx: number; errors: number }[];
    cells: QueueCell[];
  };
}

// ---------------------------------------------------------------- the measurements

/** 1. Offer latency, `offers` times (after 3 untimed rounds). */
async function offerLatency(service: Server, t: Tenant, opts: Options, log: (line: string) => void): Promise<NonNullable<VoiceReport['latency']>> {
  const [agent] = t.agents;
  const hook = await receiver();
  const seen = { created: new Map<string, number>(), offered: new Map<string, number>(), typedQueued: new Set<string>(), typedOffered: new Map<string, number>() };
  const clients: Client[] = [];
  try {
    await ok(service, 'POST', '/webhooks', t.admin.bearer, {
      webhook: { name: 'Telephony', endpoint: hook.url, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [EVENT('offered')] },
    }, 201);
    clients.push(await subscriber(service, t.admin.bearer, `subscription { accountEvents(types: ["${EVENT('created')}", "${EVENT('offered')}"]) { type detail } }`, (data) => {
      const e = data.accountEvents as { type: string; detail: { id: number } };
      const at = performance.now();
      const map = e.type === EVENT('created') ? seen.created : seen.offered;
      if (!map.has(String(e.detail.id))) map.set(String(e.detail.id), at);
    }));
    clients.push(await subscriber(service, t.admin.bearer, 'subscription { callbackRequestUpdated { id status agentId } }', (data) => {
      const r = data.callbackRequestUpdated as { id: string; status: string };
      const at = performance.now();
      if (r.status === 'QUEUED') seen.typedQueued.add(r.id);
      if (r.status === 'OFFERED' && !seen.typedOffered.has(r.id)) seen.typedOffered.set(r.id, at);
    }));
    const put: number[] = [];
    const feed: number[] = [];
    const typed: number[] = [];
    const webhook: number[] = [];
    const untimed = 3; // JIT, plan caches, the feed's LISTEN, the webhook's connection
    for (let i = 0; i < untimed + opts.offers; i++) {
      await availability(service, agent, 'away');
      const created = await ok(service, 'POST', '/channels/voice/callback_requests', t.admin.bearer, {
        callback_request: { phone_number_id: Number(t.phoneId), requester_phone_number: REQUESTER_PHONE, group_ids: [Number(t.groupId)] },
      }, 201);
      const id = /\/callback_requests\/(\d+)\.json$/.exec(created.location ?? '')?.[1];
      if (!id) throw new Error(`no Location on the created request: ${created.location}`);
      // the created event has gone through both feeds: nothing of it is in flight when the timer starts
      await until(() => seen.created.has(id) && seen.typedQueued.has(id), 10_000, `the created event of request ${id}`);
      const t0 = performance.now();
      await availability(service, agent, 'online');
      const answered = performance.now();
      await until(() => seen.offered.has(id) && seen.typedOffered.has(id) && hook.arrived.has(id), 10_000, `the offered event of request ${id} on every path`);
      if (i >= untimed) {
        put.push(answered - t0);
        feed.push(seen.offered.get(id)! - t0);
        typed.push(seen.typedOffered.get(id)! - t0);
        webhook.push(hook.arrived.get(id)! - t0);
      }
      await ok(service, 'POST', `/channels/voice/callback_requests/${id}/accept`, agent.bearer, {});
      await ok(service, 'POST', `/channels/voice/callback_requests/${id}/outcome`, agent.bearer, { outcome: 'answered' });
    }
    const r = { offers: opts.offers, put: spread(put), accountEvents: spread(feed), callbackRequestUpdated: spread(typed), webhook: spread(webhook) };
    const line = (s: Spread) => `median ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms`;
    log(`  PUT answered: ${line(r.put)}; accountEvents: ${line(r.accountEvents)}; callbackRequestUpdated: ${line(r.callbackRequestUpdated)}; webhook: ${line(r.webhook)}`);
    return r;
  } finally {
    await Promise.all(clients.map((c) => c.dispose()));
    await hook.close();
  }
}

/** 2. One dispatch run: `requests` queued, every agent online at once, each accepting and answering its offers. */
async function dispatchRun(service: Server, client: pg.Client, t: Tenant, opts: Options): Promise<DispatchRun> {
  const ids = await queueRequests(client, t, opts.requests);
  const mine = new Set(ids);
  const byId = new Map(t.agents.map((a) => [a.id, a]));
  const chains = new Map<string, Promise<void>>();
  const offeredTimes = new Map<string, number>();
  let offered = 0;
  let completed = 0;
  let failed = 0;
  let lastCompletion = 0;
  let failure: Error | undefined;
  const handle = async (agent: Agent, id: string) => {
    try {
      await ok(service, 'POST', `/channels/voice/callback_requests/${id}/accept`, agent.bearer, {});
      await ok(service, 'POST', `/channels/voice/callback_requests/${id}/outcome`, agent.bearer, { outcome: 'answered' });
      if (!mine.has(id)) return;
      completed++;
      lastCompletion = performance.now();
    } catch (err) {
      failed++;
      failure ??= err as Error;
    }
  };
  const feed = await subscriber(service, t.admin.bearer, `subscription { accountEvents(types: ["${EVENT('offered')}"]) { detail } }`, (data) => {
    const d = data.accountEvents.detail as { id: number; agent_id: number };
    const id = String(d.id);
    const agent = byId.get(String(d.agent_id));
    if (!agent) return;
    // an offer of an earlier run's request (one that ran out of time) is answered too, not counted
    if (mine.has(id)) {
      offered++;
      if (!offeredTimes.has(id)) offeredTimes.set(id, performance.now());
    }
    // an agent handles its offers one after another, as its client would
    chains.set(agent.id, (chains.get(agent.id) ?? Promise.resolve()).then(() => handle(agent, id)));
  });
  try {
    await sleep(300); // the subscribe message reaches the server (graphql-ws acknowledges none)
    const t0 = performance.now();
    await Promise.all(t.agents.map((a) => availability(service, a, 'online')));
    const deadline = Date.now() + opts.dispatchLimitSeconds * 1000;
    while (completed + failed < ids.length && Date.now() < deadline && !failure) await sleep(5);
    if (failure) throw failure;
    await Promise.all(chains.values());
    const seconds = ((lastCompletion || performance.now()) - t0) / 1000;
    const [h] = (
      await client.query<{ n: number; span: number | null }>(
        `SELECT count(*)::int AS n, EXTRACT(EPOCH FROM max(at) - min(at))::float8 AS span FROM callback_request_history
          WHERE account_id = $1 AND status = 'offered' AND callback_request_id = ANY($2::bigint[])`,
        [t.accountId, ids],
      )
    ).rows;
    return {
      offered, completed, failed, seconds, offersPerSecond: offered / seconds, completedPerSecond: completed / seconds,
      historyOffered: h.n, historyOffersPerSecond: h.span ? (h.n - 1) / h.span : NaN, reoffered: offered - offeredTimes.size,
    };
  } finally {
    await feed.dispose();
    // every agent offline again (none holds an offer: each was answered), for the next run
    for (let i = 0; i < t.agents.length; i += 20) await Promise.all(t.agents.slice(i, i + 20).map((a) => availability(service, a, 'offline')));
  }
}

async function benchStats(server: Server): Promise<{ sqlStatements: number; requests: number }> {
  const res = await fetch(`${server.origin}/__bench/stats`);
  if (!res.ok) throw new Error(`GET /__bench/stats answered ${res.status}: is BENCH_MODE on?`);
  return (await res.json()) as { sqlStatements: number; requests: number };
}

/** 3. The queue read against the list floor, alternated at each load, round after round. */
async function queueRead(service: Server, listFloor: Server, t: Tenant, opts: Options, tmp: string, log: (line: string) => void): Promise<NonNullable<VoiceReport['queueRead']>> {
  // what is read: a full page of queued requests, positions 1…100, some with history, each with an estimate
  const page = (await ok(service, 'GET', QUEUE_PATH.replace('/api/v2', ''), t.admin.bearer)).body.callback_requests as Record<string, any>[];
  const positions = page.map((r) => r.queue_position).join();
  if (page.length !== 100 || positions !== Array.from({ length: 100 }, (_, i) => i + 1).join()) throw new Error(`the queue read does not give positions 1…100: ${positions.slice(0, 200)}`);
  if (!page.some((r) => r.history.length > 0) || page.some((r) => r.estimated_wait_time === null)) throw new Error('the queue read lacks history or wait estimates');
  const floorPage = await fetch(`${listFloor.origin}${LIST_FLOOR_PATH}`, { headers: { authorization: t.admin.bearer } });
  const floorRows = ((await floorPage.json()) as { tokens?: unknown[] }).tokens?.length;
  if (!floorPage.ok || floorRows !== 100) throw new Error(`the list floor answered ${floorPage.status} with ${floorRows} rows`);

  const specs = {
    queue: { origin: service.origin, method: 'GET', path: QUEUE_PATH, headers: { authorization: t.admin.bearer } },
    'list-floor': { origin: listFloor.origin, method: 'GET', path: LIST_FLOOR_PATH, headers: { authorization: t.admin.bearer } },
  } as const;
  const measure = async (key: QueueCell['key'], round: number, connections: number, duration: number): Promise<QueueCell> => {
    const before = key === 'queue' ? await benchStats(service) : undefined;
    const result = await runLoader({ ...specs[key], connections, pipelining: 1, durationSeconds: duration } as LoadSpec, tmp);
    let sqlPerRequest: number | undefined;
    if (before) {
      await sleep(300); // requests in flight when the load stopped are answered
      const after = await benchStats(service);
      sqlPerRequest = (after.sqlStatements - before.sqlStatements) / Math.max(1, after.requests - before.requests);
    }
    return { key, round, connections, result, sqlPerRequest };
  };
  const busiest = Math.max(...opts.connections);
  for (const key of ['list-floor', 'queue'] as const) await measure(key, 0, busiest, opts.warmupSeconds);
  const cells: QueueCell[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    for (const connections of opts.connections) {
      for (const key of ['list-floor', 'queue'] as const) {
        const cell = await measure(key, round, connections, opts.durationSeconds);
        cells.push(cell);
        const r = cell.result;
        const bad = r.non2xx || r.errors ? ` (${r.non2xx} non-2xx ${JSON.stringify(r.statusCodes)}, ${r.errors} errors)` : '';
        log(`  round ${round} ${String(connections).padStart(3)} conn ${key.padEnd(10)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms${cell.sqlPerRequest === undefined ? '' : `  SQL/req ${cell.sqlPerRequest.toFixed(2)}`}${bad}`);
      }
    }
  }
  const loads = opts.connections.map((connections) => {
    const at = (key: QueueCell['key']) => cells.filter((c) => c.key === key && c.connections === connections);
    const queue = at('queue');
    const floor = at('list-floor');
    return {
      connections,
      rps: median(queue.map((c) => c.result.rps)), p50: median(queue.map((c) => c.result.p50)), p99: median(queue.map((c) => c.result.p99)),
      listFloorRps: median(floor.map((c) => c.result.rps)), listFloorP50: median(floor.map((c) => c.result.p50)),
      // each ratio against the list floor measured just before it, in the same round and load
      vsListFloor: median(queue.map((c) => c.result.rps / (floor.find((f) => f.round === c.round)?.result.rps ?? NaN))),
      sqlPerRequest: median(queue.map((c) => c.sqlPerRequest ?? NaN)),
      non2xx: queue.reduce((n, c) => n + c.result.non2xx, 0), errors: queue.reduce((n, c) => n + c.result.errors, 0),
    };
  });
  return { queued: opts.queued, rows: page.length, rounds: opts.rounds, durationSeconds: opts.durationSeconds, loads, cells };
}

/** Runs the three measurements on a database of its own; writes <out>/voice.{json,md}. */
export async function runVoiceBench(opts: Options, log: (line: string) => void = console.log): Promise<VoiceReport> {
  const started = Date.now();
  mkdirSync(opts.out, { recursive: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-voice-'));
  const serverUrl = process.env.BENCH_DATABASE_URL ?? (await throwawayPostgres()).url;
  const name = `bench_voice_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const postgres = (await admin.query('SHOW server_version')).rows[0].server_version as string;
  const url = serverUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const servers: Server[] = [];
  const client = new pg.Client({ connectionString: url });
  try {
    const hashKey = randomBytes(32).toString('hex');
    const db = await createDb({ databaseUrl: url, poolSize: 1 });
    await migrate(db);
    await db.close();
    await client.connect();
    // three accounts, so that each measurement has its own lock, events and data
    const latencyTenant = await seedTenant(client, hashKey, 'latency', 1);
    const dispatchTenant = await seedTenant(client, hashKey, 'dispatch', opts.agents);
    // the list floor reads a page of the caller's account's tokens: give the admin a hundred more
    const queueTenant = await seedTenant(client, hashKey, 'queue', 5, 150);
    await seedQueue(client, queueTenant, opts.queued);
    await client.query('ANALYZE');
    log(`seeded: an agent; ${opts.agents} agents in a group; ${opts.queued} queued requests with history`);

    const common = { DATABASE_URL: url, HASH_KEY: hashKey, DB_POOL_SIZE: String(opts.pool) };
    const [service, listFloor] = await Promise.all([
      // a 1 s window: the latency loop creates one request per offer through the API (30 per window)
      startServer('voice service', path.join(ROOT, 'dist/src/main.js'), { ...common, BENCH_MODE: 'true', WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'true', CALLBACK_RATE_WINDOW_SECONDS: '1' }),
      startServer('list floor', path.join(__dirname, 'references/list-floor.js'), common),
    ]);
    servers.push(service, listFloor);

    let latency: VoiceReport['latency'];
    if (opts.parts.has('latency')) {
      log(`offer latency: ${opts.offers} offers (agent away → request queued → agent online → offered event)`);
      latency = await offerLatency(service, latencyTenant, opts, log);
    }

    let read: VoiceReport['queueRead'];
    if (opts.parts.has('queue')) {
      log(`queue read: ${QUEUE_PATH} against the list floor, ${opts.rounds} round(s) of ${opts.durationSeconds} s at ${opts.connections.join(' and ')} connections`);
      read = await queueRead(service, listFloor, queueTenant, opts, tmp, log);
    }

    let dispatch: VoiceReport['dispatch'];
    if (opts.parts.has('dispatch')) {
      log(`dispatch: ${opts.requests} queued requests, ${opts.agents} agents online at once, accepting and answering; ${opts.dispatchRuns} run(s)`);
      const runs: DispatchRun[] = [];
      for (let i = 0; i < opts.dispatchRuns; i++) {
        const run = await dispatchRun(service, client, dispatchTenant, opts);
        runs.push(run);
        log(`  run ${i + 1}: ${run.completed} of ${opts.requests} completed in ${run.seconds.toFixed(2)} s: ${run.offersPerSecond.toFixed(0)} offers/s (history rows: ${run.historyOffersPerSecond.toFixed(0)}/s), ${run.failed} failed, ${run.reoffered} offered again`);
      }
      dispatch = {
        agents: opts.agents, requests: opts.requests, runs,
        offersPerSecond: median(runs.map((r) => r.offersPerSecond)), completedPerSecond: median(runs.map((r) => r.completedPerSecond)),
      };
    }

    const report: VoiceReport = {
      meta: {
        date: new Date().toISOString(), mode: opts.mode, judged: opts.mode !== 'smoke', node: process.version,
        cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`, postgres, pool: opts.pool, totalSeconds: (Date.now() - started) / 1000,
      },
      latency,
      dispatch,
      queueRead: read,
    };
    writeFileSync(path.join(opts.out, 'voice.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(opts.out, 'voice.md'), markdown(report));
    log(`voice report: ${path.join(opts.out, 'voice.md')} (${report.meta.totalSeconds.toFixed(0)} s)`);
    return report;
  } finally {
    for (const s of servers) await s.stop();
    await client.end().catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(tmp, { recursive: true, force: true });
  }
}

function markdown(r: VoiceReport): string {
  const verdict = (ok: boolean) => (r.meta.judged ? (ok ? '**met**' : '**missed**') : 'not judged (smoke)');
  const ms = (s: Spread) => `**${s.p50.toFixed(1)} ms** (p95 ${s.p95.toFixed(1)}, max ${s.max.toFixed(1)})`;
  const latencyRow = (what: string, s: Spread) => `| ${what} | ${ms(s)} | ${VOICE_TARGETS.offerLatencyMs.text} | ${verdict(s.p50 <= VOICE_TARGETS.offerLatencyMs.max)} |`;
  const sections: string[] = [];
  const l = r.latency;
  if (l) {
    sections.push(`## 1. Offer latency (${l.offers} offers)

An agent away, a request queued (POST, its created event seen on both subscriptions), then the agent comes online
(PUT /api/v2/channels/voice/availabilities/{id}): the offer is decided and committed in the PUT's transaction.
Times from sending the PUT, median (p95, max):

| path | time | target | |
|---|---|---|---|
| the PUT's answer (the offer committed) | ${ms(l.put)} | — | |
${latencyRow('graphql-ws `accountEvents` (the event envelope)', l.accountEvents)}
${latencyRow('graphql-ws `callbackRequestUpdated` (the request read again for each event)', l.callbackRequestUpdated)}
${latencyRow("webhook on 127.0.0.1 (a delivery job of the web process's engine)", l.webhook)}`);
  }
  const q = r.queueRead;
  if (q) {
    sections.push(`## 2. Queue read under load

\`GET ${QUEUE_PATH}\`: the first ${q.rows} of ${q.queued} queued requests (a third with history; each with its
queue position and wait estimate), against the **list floor** (bench/references/list-floor.ts at scenario 4a's request:
one raw \`pg\` statement for a page of 100 tokens; same database, same pool size), alternated, ${q.rounds} round(s) of
${q.durationSeconds} s at each load; each ratio against the list floor measured just before it; medians.

| connections | req/s | p50 ms | p99 ms | list floor req/s (p50 ms) | × list floor | SQL/request | target | |
|---:|---:|---:|---:|---:|---:|---:|---|---|
${q.loads.map((x) => `| ${x.connections} | ${x.rps.toFixed(0)} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.listFloorRps.toFixed(0)} (${x.listFloorP50.toFixed(2)}) | **${x.vsListFloor.toFixed(2)}** | ${x.sqlPerRequest.toFixed(2)} | ${VOICE_TARGETS.queueReadVsListFloor.text} | ${verdict(x.vsListFloor >= VOICE_TARGETS.queueReadVsListFloor.min)}${x.non2xx || x.errors ? ` ⚠ ${x.non2xx} non-2xx, ${x.errors} errors` : ''} |`).join('\n')}`);
  }
  const d = r.dispatch;
  if (d) {
    sections.push(`## 3. Dispatch throughput (${d.requests} queued requests, ${d.agents} agents)

The ${d.agents} agents of the requests' group come online at once (${d.agents} concurrent PUTs); each agent accepts and
answers every offer it gets (one accountEvents subscription hands offers to agents; an agent's POST accept then
POST outcome \`answered\`, one offer after another). From the first PUT to the last completion:

| run | completed | seconds | offers/s | completed/s | offered (history rows/s) | offered again | failed |
|---|---:|---:|---:|---:|---:|---:|---:|
${d.runs.map((x, i) => `| ${i + 1} | ${x.completed} / ${d.requests} | ${x.seconds.toFixed(2)} | ${x.offersPerSecond.toFixed(0)} | ${x.completedPerSecond.toFixed(0)} | ${x.historyOffered} (${x.historyOffersPerSecond.toFixed(0)}/s) | ${x.reoffered} | ${x.failed} |`).join('\n')}

Median: **${d.offersPerSecond.toFixed(0)} offers/s**, ${d.completedPerSecond.toFixed(0)} completed/s. Every decision (an agent
online, an accept, an outcome that routes the next request) takes the account's lifecycle lock, so one account's
decisions run one at a time whatever the number of agents: the figure is the account's, not the service's.`);
  }
  return `# Voice callback benchmark (${r.meta.mode}, ${r.meta.date})

Node ${r.meta.node}, ${r.meta.cpus}, PostgreSQL ${r.meta.postgres}; service pool ${r.meta.pool}; ${r.meta.totalSeconds.toFixed(0)} s.
\`npm run bench:voice\` (bench/voice.ts). **Machine caveat:** 2 cores shared with other work; the service, PostgreSQL,
the load generator and the benchmark's own clients all run on them, so absolute figures move between runs (the
queue read's ratio less: its list floor is measured on the same machine seconds before it).

${sections.join('\n\n')}

How: one built service process (\`node dist/src/main.js\`, NODE_ENV=production, LOG_LEVEL=warn, BENCH_MODE=true for the
statement counter, WEBHOOK_ALLOW_PRIVATE_ENDPOINTS=true, CALLBACK_RATE_WINDOW_SECONDS=1, its job engine on) on a
database of its own; three accounts seeded in SQL (bench/voice.ts), one per measurement, offers expiring after 600 s
(no expiry timer runs during the run); the subscribers, the webhook receiver and the agents are in the benchmark's
process; autocannon in a separate process (bench/load.ts). What the figures mean and what was changed for them:
bench/tuning-log.md, "The callback lifecycle".
`;
}

if (require.main === module) {
  benchMain('voice', PARTS, (args, log) => runVoiceBench({ ...voiceOptions(args.mode, args.out), ...(args.only ? { parts: args.only } : {}) }, log));
}
