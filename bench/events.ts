// `npm run bench:events` (and the end of `npm run bench`) — what events cost a write and
// how fast they leave the service (issue 22; docs/api.md "Events", "Webhook deliveries",
// "Live events"), on PostgreSQL, with the service as built production processes:
//
//   1. write cost: a client update as the service makes it (the repository's update and
//      recordAudit in one transaction: oauth-client.service.ts), with its event and
//      without, alternated one by one on one connection; medians. Target: ≤ 1.10 ×.
//   2. deliveries: E events committed by a web-only process (WORKER=false), then one
//      worker process (npm run worker) started: events delivered per second to a
//      local receiver (first delivery to last), each signed, each once. Target ≥ 1,000/s.
//      Also "live": the same writes while a web process with its engine delivers them.
//   3. subscription fan-out: S graphql-ws subscribers of accountEvents on one web
//      process; one change; the time until the last of them has it, per round, median
//      of the rounds. Target: S = 1,000 within 1 s.
//
//   npm run bench:events                full (5,000 events, 2,000 writes each way, 1,000 subscribers, 5 rounds)
//   npm run bench:events -- --quick     fewer of each (a minute)
//   npm run bench:events -- --smoke     tiny, judges nothing (CI's bench smoke test)
//   options: --out DIR (default bench/results): events.json and events.md
// BENCH_DATABASE_URL: a server to make a database of its own on (else a throwaway PostgreSQL).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { createDb } from '../src/db/create-db';
import { migrate } from '../src/db/migrate';
import { tenantTransaction } from '../src/db/tenant-sql';
import { recordAudit, type AuditActor } from '../src/domain/audit/audit-log.repository';
import { changeEvent, clientDetail } from '../src/domain/events/event-details';
import { validateOAuthClient } from '../src/domain/oauth-clients/oauth-client.validation';
import { repositories } from '../src/domain/repositories';
import { sleep } from './net';
import { median } from './stats';
import { children, startServer, throwawayPostgres, type Server } from './processes';
import { benchMain, type BenchMode } from './cli';

const ROOT = path.resolve(__dirname, '../..');
const UPDATED = 'zen:event-type:oauth_client.updated';
const ADMIN_PASSWORD = 'bench-events-admin-password';

export const EVENT_TARGETS = {
  writeOverhead: { max: 1.1, text: 'a write with its event ≤ 1.10 × the same write without' },
  deliveriesPerSecond: { min: 1000, text: '≥ 1,000 events delivered per second to a local receiver' },
  fanOutSeconds: { max: 1, text: '1 event to 1,000 subscribers within 1 s' },
};

interface Options {
  mode: BenchMode;
  events: number;
  writes: number;
  subscribers: number;
  rounds: number;
  out: string;
}

/** The measurements' sizes in each mode (npm run bench passes its own mode and folder). */
export function eventsOptions(mode: Options['mode'], out: string): Options {
  const preset = {
    full: { events: 5000, writes: 2000, subscribers: 1000, rounds: 5 },
    quick: { events: 2000, writes: 500, subscribers: 1000, rounds: 3 },
    smoke: { events: 100, writes: 50, subscribers: 20, rounds: 1 },
  }[mode];
  return { mode, ...preset, out };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

/** A receiver that answers 200 at once and remembers each webhook-id once (a repeat is counted apart). */
async function receiver() {
  const seen = new Set<string>();
  const at: number[] = [];
  let repeats = 0;
  let unsigned = 0;
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (!req.headers['x-zendesk-webhook-signature'] || !req.headers['webhook-signature']) unsigned++;
      if (seen.has(id)) repeats++;
      else {
        seen.add(id);
        at.push(performance.now());
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => seen.size,
    at,
    stats: () => ({ repeats, unsigned }),
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** Runs `count` calls of `fn` with at most `concurrency` at once. */
async function pool(count: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) await fn(next++);
  }));
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export interface EventsReport {
  meta: { date: string; mode: Options['mode']; judged: boolean; node: string; cpus: string; postgres: string; totalSeconds: number };
  write: { iterations: number; withoutMs: number; withMs: number; withoutP95Ms: number; withP95Ms: number; ratio: number };
  deliveries: { events: number; writesPerSecond: number; perSecond: number; liveEvents: number; livePerSecond: number; lastDeliveredAfterLastWriteMs: number; repeats: number; unsigned: number };
  fanOut: { subscribers: number; rounds: number; lastMs: number; p50Ms: number; roundsLastMs: number[] };
}

async function api(server: Server, method: string, url: string, auth: string, body?: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${server.origin}/api/v2${url}`, {
    method, headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

/** Runs the three measurements on a database of its own; writes <out>/events.{json,md}. */
export async function runEventsBench(opts: Options, log: (line: string) => void = console.log): Promise<EventsReport> {
  const started = Date.now();
  mkdirSync(opts.out, { recursive: true });
  // a database of its own: on BENCH_DATABASE_URL's server, or a throwaway one
  const serverUrl = process.env.BENCH_DATABASE_URL ?? (await throwawayPostgres()).url;
  const name = `bench_events_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const postgres = (await admin.query('SHOW server_version')).rows[0].server_version as string;
  const url = serverUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const servers: Server[] = [];
  const closers: (() => Promise<void>)[] = [];
  try {
    const hashKey = randomBytes(32).toString('hex');
    const common = { DATABASE_URL: url, HASH_KEY: hashKey, ADMIN_PASSWORD, WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'true', DB_POOL_SIZE: '20' };
    const main = path.join(ROOT, 'dist/src/main.js');
    const web = await startServer('web (no worker)', main, { ...common, WORKER: 'false' });
    servers.push(web);
    const basic = `Basic ${Buffer.from(`admin@example.com:${ADMIN_PASSWORD}`).toString('base64')}`;
    // clients to change (one per writer, so that writers do not queue on one row), and a token
    const clients: string[] = [];
    for (let i = 0; i < 20; i++) {
      const c = await api(web, 'POST', '/oauth/clients', basic, { name: `Events ${i}`, company: 'Bench', client_type: 'confidential', scopes: 'read write', redirect_uris: ['https://bench.example/cb'] });
      clients.push(String(c.id));
    }
    const token = await api(web, 'POST', '/oauth/tokens', basic, { token: { client_id: Number(clients[0]), scopes: ['read', 'write'] } });
    const bearer = `Bearer ${token.token.token}`;
    const rename = (i: number) => api(web, 'PUT', `/oauth/clients/${clients[i % clients.length]}`, bearer, { name: `Renamed ${i}` }).then(() => undefined);

    // 1. write cost, in this process, on the same database (no webhook yet: nothing is delivered)
    log(`write cost: ${opts.writes} client updates with their event and ${opts.writes} without, alternated`);
    const db = await createDb({ databaseUrl: url, poolSize: 1 });
    await migrate(db);
    const [{ account_id, id: adminId }] = await db.sql<{ account_id: string; id: string }>("SELECT account_id, id FROM users WHERE email = 'admin@example.com'");
    const scope = { accountId: BigInt(account_id) };
    const actor: AuditActor = { accountId: scope.accountId, actorId: BigInt(adminId), actorName: 'Admin', origin: { via: 'api' } };
    const clientId = BigInt(clients[0]);
    // the service's update (OAuthClientService.update), with or without the event of its audit entry
    const write = (withEvent: boolean, i: number) => tenantTransaction(db, async (sql) => {
      const updated = await repositories(sql).clients.update(scope, clientId, validateOAuthClient({ name: `Write ${i}` }, true));
      if (!updated) throw new Error('the client is gone');
      const { client, changed, previous } = updated;
      const detail = clientDetail(client);
      await recordAudit(sql, actor, {
        action: 'update', sourceType: 'oauth_client', sourceId: client.id, sourceLabel: client.name, changedFields: changed, description: `Changed ${changed.join(', ')}`,
        ...(withEvent ? { event: { name: 'oauth_client.updated' as const, subject: `oauth_client:${client.id}`, detail, event: changeEvent(changed, previous, detail) } } : {}),
      });
    });
    for (let i = 0; i < Math.min(200, opts.writes); i++) await write(i % 2 === 0, i); // warm-up
    const without: number[] = [];
    const withEvent: number[] = [];
    for (let i = 0; i < opts.writes; i++) {
      for (const on of i % 2 ? [true, false] : [false, true]) {
        const t = performance.now();
        await write(on, i);
        (on ? withEvent : without).push(performance.now() - t);
      }
    }
    // the events of this part go nowhere: no webhook subscribed, and their jobs are dropped
    await db.sql('DELETE FROM jobs');
    await db.close();
    const w = { iterations: opts.writes, withoutMs: median(without), withMs: median(withEvent), withoutP95Ms: quantile(without, 0.95), withP95Ms: quantile(withEvent, 0.95), ratio: median(withEvent) / median(without) };
    log(`  without ${w.withoutMs.toFixed(3)} ms, with ${w.withMs.toFixed(3)} ms (medians): ${w.ratio.toFixed(3)} ×`);

    // 2. deliveries
    const sink = await receiver();
    closers.push(sink.close);
    await api(web, 'POST', '/webhooks', basic, { webhook: { name: 'Bench receiver', endpoint: sink.url, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [UPDATED] } });
    log(`deliveries: ${opts.events} changes by the web-only process, then one worker process drains them`);
    let t = performance.now();
    await pool(opts.events, 20, rename);
    const writesPerSecond = opts.events / ((performance.now() - t) / 1000);
    if (sink.count() !== 0) throw new Error('a web-only process delivered: WORKER=false did not hold');
    const worker = spawn(process.execPath, [main, '--worker-only'], {
      cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn', PUBLIC_URL: web.origin, ...common }, stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.add(worker);
    let workerRuns = true;
    const workerExited = new Promise<void>((r) => worker.once('exit', () => ((workerRuns = false), r())));
    await until(() => sink.count() >= opts.events || !workerRuns, 300_000, `${opts.events} deliveries`);
    if (!workerRuns) throw new Error('the worker process exited');
    const drain = sink.at.slice(0, opts.events);
    const perSecond = (drain.length - 1) / ((drain[drain.length - 1] - drain[0]) / 1000);
    log(`  ${opts.events} delivered in ${((drain[drain.length - 1] - drain[0]) / 1000).toFixed(2)} s: ${perSecond.toFixed(0)} events/s (written at ${writesPerSecond.toFixed(0)}/s)`);
    // live: the worker runs while the same number of changes is made
    const before = sink.count();
    t = performance.now();
    await pool(opts.events, 20, (i) => rename(opts.events + i));
    const lastWrite = performance.now();
    await until(() => sink.count() >= before + opts.events, 300_000, 'the live deliveries');
    const liveEnd = sink.at[sink.at.length - 1];
    const livePerSecond = opts.events / ((liveEnd - t) / 1000);
    log(`  live: ${opts.events} changes delivered ${livePerSecond.toFixed(0)}/s, the last ${(liveEnd - lastWrite).toFixed(0)} ms after the last write`);
    worker.kill('SIGTERM');
    await workerExited;
    children.delete(worker);
    const d = { events: opts.events, writesPerSecond, perSecond, liveEvents: opts.events, livePerSecond, lastDeliveredAfterLastWriteMs: liveEnd - lastWrite, ...sink.stats() };

    // 3. subscription fan-out
    log(`fan-out: ${opts.subscribers} subscribers, ${opts.rounds} round(s) of one change`);
    const arrivals: number[][] = [];
    const wsUrl = `${web.origin.replace(/^http/, 'ws')}/graphql`;
    const subscribers: Client[] = [];
    let subscribed = 0;
    for (let i = 0; i < opts.subscribers; i++) {
      const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: bearer }, retryAttempts: 0, lazy: false, onNonLazyError: () => {} });
      subscribers.push(client);
      await new Promise<void>((resolve, reject) => {
        const off = client.on('connected', () => (off(), resolve()));
        client.on('closed', (e) => reject(new Error(`subscriber ${i} closed: ${(e as { reason?: string }).reason ?? ''}`)));
      });
      client.subscribe({ query: `subscription { accountEvents(types: ["${UPDATED}"]) { id } }` }, {
        next: () => arrivals[arrivals.length - 1]?.push(performance.now()),
        error: (err) => log(`  subscriber ${i}: ${JSON.stringify(err)}`),
        complete: () => {},
      });
      subscribed++;
    }
    closers.push(async () => {
      await Promise.all(subscribers.map((c) => c.dispose()));
    });
    await sleep(1000); // the subscribe messages reach the server (graphql-ws acknowledges none)
    const roundsLastMs: number[] = [];
    const p50s: number[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      arrivals.push([]);
      const mine = arrivals[arrivals.length - 1];
      const t0 = performance.now();
      await rename(10_000_000 + round);
      await until(() => mine.length >= subscribed, 30_000, `${subscribed} subscribers to hear of the change`);
      roundsLastMs.push(mine[mine.length - 1] - t0);
      p50s.push(median(mine) - t0);
      log(`  round ${round + 1}: all ${subscribed} within ${roundsLastMs[round].toFixed(0)} ms (half within ${p50s[round].toFixed(0)} ms)`);
      await sleep(200);
    }
    const f = { subscribers: subscribed, rounds: opts.rounds, lastMs: median(roundsLastMs), p50Ms: median(p50s), roundsLastMs };

    const report: EventsReport = {
      meta: {
        date: new Date().toISOString(), mode: opts.mode, judged: opts.mode !== 'smoke', node: process.version,
        cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`, postgres, totalSeconds: (Date.now() - started) / 1000,
      },
      write: w,
      deliveries: d,
      fanOut: f,
    };
    writeFileSync(path.join(opts.out, 'events.json'), JSON.stringify(report, null, 2) + '\n');
    writeFileSync(path.join(opts.out, 'events.md'), markdown(report));
    log(`events report: ${path.join(opts.out, 'events.md')}`);
    return report;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    for (const s of servers) await s.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

function markdown(r: EventsReport): string {
  const verdict = (ok: boolean) => (r.meta.judged ? (ok ? '**met**' : '**missed**') : 'not judged (smoke)');
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  return `# Events benchmark (${r.meta.mode}, ${r.meta.date})

Node ${r.meta.node}, ${r.meta.cpus}, PostgreSQL ${r.meta.postgres}; ${r.meta.totalSeconds.toFixed(0)} s. \`npm run bench:events\` (bench/events.ts).

| measure | result | target | |
|---|---|---|---|
| a client update with its event / without (median of ${r.write.iterations} each, alternated) | ${ms(r.write.withMs)} / ${ms(r.write.withoutMs)} = **${r.write.ratio.toFixed(3)} ×** (p95 ${ms(r.write.withP95Ms)} / ${ms(r.write.withoutP95Ms)}) | ${EVENT_TARGETS.writeOverhead.text} | ${verdict(r.write.ratio <= EVENT_TARGETS.writeOverhead.max)} |
| events delivered per second to a local receiver (${r.deliveries.events} committed, one worker process drains them) | **${r.deliveries.perSecond.toFixed(0)}/s** (written at ${r.deliveries.writesPerSecond.toFixed(0)}/s) | ${EVENT_TARGETS.deliveriesPerSecond.text} | ${verdict(r.deliveries.perSecond >= EVENT_TARGETS.deliveriesPerSecond.min)} |
| live: written and delivered at once | ${r.deliveries.livePerSecond.toFixed(0)}/s; the last delivered ${r.deliveries.lastDeliveredAfterLastWriteMs.toFixed(0)} ms after the last write | — | |
| deliveries repeated / unsigned | ${r.deliveries.repeats} / ${r.deliveries.unsigned} | 0 / 0 | ${r.deliveries.repeats === 0 && r.deliveries.unsigned === 0 ? 'ok' : '**not ok**'} |
| one event to ${r.fanOut.subscribers} graphql-ws subscribers: the last has it after (median of ${r.fanOut.rounds}) | **${r.fanOut.lastMs.toFixed(0)} ms** (half of them within ${r.fanOut.p50Ms.toFixed(0)} ms; rounds ${r.fanOut.roundsLastMs.map((x) => x.toFixed(0)).join(', ')} ms) | ${EVENT_TARGETS.fanOutSeconds.text} | ${verdict(r.fanOut.subscribers >= 1000 && r.fanOut.lastMs <= EVENT_TARGETS.fanOutSeconds.max * 1000)} |

How: the write cost runs in the benchmark's process on one connection, the service's own repository update
and recordAudit with and without the event of the audit entry (the events and their job are CTEs of the audit
statement: no extra round trip). Deliveries and fan-out use the built service (NODE_ENV=production) as separate
processes: a web-only process (WORKER=false) takes the changes (PUT /api/v2/oauth/clients/{id} by 20 writers with a
Bearer token), a worker process (\`npm run worker\`) delivers to a receiver in the benchmark's process that answers
200 at once; the subscribers are graphql-ws clients in the benchmark's process, on the web process.
`;
}

if (require.main === module) {
  benchMain('events', [], (args, log) => runEventsBench(eventsOptions(args.mode, args.out), log));
}
