// `npm run bench:retention` (and the end of `npm run bench`) — storage stays bounded without
// hurting live traffic (issue 24; docs/api.md "Retention"), on PostgreSQL, against the
// service as a built production process:
//
//   1. scale: L live tokens (and refresh families) and E expired tokens and authorization
//      codes (with their dead grants) in one database. The Bearer scenario (GET
//      /api/v2/oauth/tokens/current.json over the live tokens) runs at 50 connections in
//      windows: without the purge, then while `npm run cli -- purge` (the same code as the
//      recurring job) removes the expired rows, then without again. Throughput during the
//      purge as a ratio of the median without (target ≥ 0.80), p99 during vs without; every
//      live row kept and still authenticating; table sizes (pg_total_relation_size) after
//      the purge and VACUUM against the live data's size (target ≤ 2 ×).
//   2. soak: S seconds issuing and revoking tokens, codes and refreshes at full speed
//      (client_credentials issue + revoke; authorization code through the sign-in and
//      consent pages, exchange, two refreshes, revoke) with retention settings of seconds
//      and the service's own recurring purge: the row count of every table, sampled, stays
//      flat (min/max per table after the warm-up; the second half never above the first).
//
//   npm run bench:retention                full (1,000,000 expired + 10,000 live; a 10-minute soak; ~16 min)
//   npm run bench:retention -- --quick     100,000 expired, a 2-minute soak
//   npm run bench:retention -- --smoke     tiny, judges nothing (CI's bench smoke test)
//   options: --out DIR (default bench/results): retention.json and retention.md; --only scale|soak
// BENCH_DATABASE_URL: a server to make a database of its own on (else a throwaway PostgreSQL).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb } from '../src/db/create-db';
import { migrate } from '../src/db/migrate';
import type { LoadResult } from './load';
import { sleep } from './net';
import { children, runLoader, startServer, throwawayPostgres, type Server } from './processes';
import { benchMain, type BenchMode } from './cli';
import { BASIC_PASSWORD, BENCH_CLIENT, refreshTokenText, seed, tokenText, type Fixture } from './seed';
import { median } from './stats';

const ROOT = path.resolve(__dirname, '../..');
const BEARER_PATH = '/api/v2/oauth/tokens/current.json';
const REDIRECT = 'https://bench.example.com/cb';
/** the tables the scale run fills with expired rows */
const SCALE_TABLES = ['oauth_tokens', 'oauth_grants', 'oauth_authorization_codes'] as const;

export const RETENTION_TARGETS = {
  throughputDuringPurge: { min: 0.8, text: '≥ 0.80 × without the purge' },
  sizeAfterPurge: { max: 2, text: '≤ 2 × the live data' },
  soakFlat: { text: 'flat: after the warm-up, the median of the second half ≤ 1.25 × the first half’s (+ 20 rows)' },
};

const PARTS = ['scale', 'soak'] as const;
type Part = (typeof PARTS)[number];

interface Options {
  mode: BenchMode;
  /** expired tokens and codes (7 : 3), plus one dead grant per three codes */
  expired: number;
  /** live tokens, of which `liveRefresh` are refresh families */
  live: number;
  liveRefresh: number;
  connections: number;
  windowSeconds: number;
  /** windows without the purge, before it and after it */
  baselineBefore: number;
  baselineAfter: number;
  soakSeconds: number;
  /** concurrent loops of each soak traffic kind */
  soakLoops: number;
  parts: Set<Part>;
  out: string;
}

export function retentionOptions(mode: Options['mode'], out: string): Options {
  const full = mode === 'full';
  const quick = mode === 'quick';
  return {
    mode,
    expired: full ? 1_000_000 : quick ? 100_000 : 10_000,
    live: full || quick ? 10_000 : 1_000,
    liveRefresh: full || quick ? 1_000 : 100,
    connections: 50,
    windowSeconds: full ? 5 : quick ? 3 : 1,
    baselineBefore: full ? 4 : 2,
    baselineAfter: full ? 3 : 1,
    soakSeconds: full ? 600 : quick ? 120 : 20,
    soakLoops: full || quick ? 8 : 2,
    parts: new Set(PARTS),
    out,
  };
}

interface Window extends LoadResult {
  phase: 'before' | 'during' | 'after';
  /** seconds since the first window began */
  at: number;
}

interface ScaleReport {
  expired: { tokens: number; codes: number; grants: number };
  live: { tokens: number; refreshFamilies: number };
  purge: { seconds: number; output: string; removed: Record<string, number> };
  windows: Window[];
  without: { rps: number; p99: number };
  during: { rps: number; p99: number; windows: number };
  ratio: number;
  kept: { tokens: number; grants: number; codes: number; authenticated: number; probed: number; refreshed: boolean };
  sizes: { table: string; live: number; beforePurge: number; afterVacuum: number; afterReindex: number; afterVacuumFull: number }[];
  sizeRatioAfterVacuum: number;
  sizeRatioAfterReindex: number;
  sizeRatioAfterVacuumFull: number;
}

interface SoakTable {
  table: string;
  min: number;
  max: number;
  firstHalfMedian: number;
  secondHalfMedian: number;
  flat: boolean;
}

/** Tables with a fixed bound of their own: flat when under it (retention_runs keeps the last 100 runs). */
const BOUNDED: Record<string, number> = { retention_runs: 100 };

interface SoakReport {
  seconds: number;
  settings: Record<string, string>;
  operations: Record<string, number>;
  failures: Record<string, number>;
  samples: number;
  tables: SoakTable[];
  flat: boolean;
}

interface RetentionReport {
  meta: {
    date: string; mode: Options['mode']; judged: boolean; node: string; cpus: string; postgres: string; totalSeconds: number;
    /** parts not run this time (--only), kept from the previous report in the folder: the date of their run */
    carried?: Partial<Record<Part, string>>;
  };
  scale?: ScaleReport;
  soak?: SoakReport;
}

// ---------------------------------------------------------------- databases

async function newDatabase(serverUrl: string, admin: pg.Client, label: string): Promise<{ url: string; name: string }> {
  const name = `bench_retention_${label}_${process.pid}_${randomBytes(3).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = serverUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const db = await createDb({ databaseUrl: url, poolSize: 1 });
  await migrate(db);
  await db.close();
  return { url, name };
}

async function tableSizes(client: pg.Client, tables: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = Number((await client.query('SELECT pg_total_relation_size($1::regclass) AS s', [t])).rows[0].s);
  return out;
}

const count = async (client: pg.Client, table: string, where = 'true') => Number((await client.query(`SELECT count(*)::bigint AS n FROM ${table} WHERE ${where}`)).rows[0].n);

/** Expired tokens (half revoked, all past their expiry by weeks) and dead grants with used and expired codes, in chunks. */
async function seedExpired(client: pg.Client, f: Fixture, expired: number, log: (line: string) => void): Promise<ScaleReport['expired']> {
  const grants = Math.floor((expired * 0.3) / 3);
  const codes = grants * 3;
  const tokens = expired - codes;
  const ids = [f.accountId, f.clientId, f.adminId];
  for (let from = 1; from <= tokens; from += 100_000) {
    const to = Math.min(tokens, from + 99_999);
    await client.query(
      `INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes, created_at, expires_at, revoked_at)
       SELECT $1, $2, $3, md5('expired-token-' || g), 'expiredtok', ARRAY['read'], now() - interval '40 days',
              now() - interval '30 days' + (g % 1440) * interval '1 minute',
              CASE WHEN g % 2 = 0 THEN now() - interval '35 days' END
         FROM generate_series($4::int, $5::int) g`,
      [...ids, from, to],
    );
    log(`  expired tokens: ${to.toLocaleString('en')} / ${tokens.toLocaleString('en')}`);
  }
  for (let from = 1; from <= grants; from += 20_000) {
    const to = Math.min(grants, from + 19_999);
    // each dead grant: revoked 9 days ago, with one used code and two that expired unused
    await client.query(
      `WITH g AS (
         INSERT INTO oauth_grants (account_id, client_id, user_id, scopes, created_at, revoked_at)
         SELECT $1, $2, $3, ARRAY['read'], now() - interval '10 days', now() - interval '9 days' FROM generate_series($4::int, $5::int)
         RETURNING id)
       INSERT INTO oauth_authorization_codes (account_id, grant_id, client_id, code_hash, redirect_uri, created_at, expires_at, used_at)
       SELECT $1, g.id, $2, md5('expired-code-' || g.id || '-' || k), '${REDIRECT}', now() - interval '10 days',
              now() - interval '10 days' + interval '120 seconds', CASE WHEN k = 1 THEN now() - interval '10 days' END
         FROM g, generate_series(1, 3) k`,
      [...ids, from, to],
    );
    log(`  dead grants with their codes: ${to.toLocaleString('en')} / ${grants.toLocaleString('en')}`);
  }
  return { tokens, codes, grants };
}

/** Runs `npm run cli -- purge` (the built CLI, as the README's command does) to its end. */
function runPurgeCli(env: Record<string, string>): { done: Promise<{ code: number | null; output: string; seconds: number }> } {
  const started = Date.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/cli/main.js'), 'purge'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  for (const s of [child.stdout, child.stderr]) s.on('data', (d: Buffer) => (output += String(d)));
  return {
    done: new Promise((resolve) => child.once('close', (code) => {
      children.delete(child);
      resolve({ code, output, seconds: (Date.now() - started) / 1000 });
    })),
  };
}

/** "oauth_tokens  700,000"-style lines of the CLI's table: the figures per table. */
function removedFrom(output: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of output.matchAll(/^\s*([a-z_]+)\s*[|:]?\s*([\d,]+)\s*(?:\|.*)?$/gm)) out[m[1]] = Number(m[2].replace(/,/g, ''));
  return out;
}

async function scaleRun(serverUrl: string, admin: pg.Client, opts: Options, tmp: string, log: (line: string) => void): Promise<ScaleReport> {
  const { url } = await newDatabase(serverUrl, admin, 'scale');
  const hashKey = randomBytes(32).toString('hex');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let service: Server | undefined;
  try {
    const f = await seed({ url, hashKey, tokens: opts.live - opts.liveRefresh, refreshTokens: opts.liveRefresh, callbackAccounts: 0, basicUsers: 0 });
    for (const t of SCALE_TABLES) await client.query(`VACUUM ANALYZE ${t}`);
    const liveSizes = await tableSizes(client, SCALE_TABLES);
    log(`scale: ${opts.live.toLocaleString('en')} live tokens (${opts.liveRefresh.toLocaleString('en')} refresh families); adding ${opts.expired.toLocaleString('en')} expired tokens and codes`);
    const expired = await seedExpired(client, f, opts.expired, log);
    await client.query('ANALYZE');
    const beforeSizes = await tableSizes(client, SCALE_TABLES);

    const env = { DATABASE_URL: url, HASH_KEY: hashKey };
    // the web process alone: the purge under test is the CLI's, started when the bench says
    service = await startServer('service', path.join(ROOT, 'dist/src/main.js'), { ...env, WORKER: 'false' });
    const variants = Array.from({ length: Math.min(1000, opts.live - opts.liveRefresh) }, (_, i) => ({ headers: { authorization: `Bearer ${tokenText(i + 1)}` } }));
    const started = Date.now();
    const windows: Window[] = [];
    const window = async (phase: Window['phase']) => {
      const at = (Date.now() - started) / 1000;
      const r = await runLoader({ origin: service!.origin, method: 'GET', path: BEARER_PATH, variants, connections: opts.connections, pipelining: 1, durationSeconds: opts.windowSeconds }, tmp);
      windows.push({ ...r, phase, at });
      log(`  ${phase.padEnd(6)} ${r.rps.toFixed(0).padStart(6)} req/s, p99 ${r.p99.toFixed(1)} ms${r.non2xx || r.errors ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : ''}`);
    };
    // warm-up (not counted), then windows without the purge
    // (three windows' worth: the first seconds of a fresh process and of a cold million-row index are slower)
    await runLoader({ origin: service.origin, method: 'GET', path: BEARER_PATH, variants, connections: opts.connections, pipelining: 1, durationSeconds: 3 * opts.windowSeconds }, tmp);
    for (let i = 0; i < opts.baselineBefore; i++) await window('before');
    log('  purge: npm run cli -- purge');
    const purge = runPurgeCli({ ...env, PUBLIC_URL: service.origin });
    let finished: Awaited<typeof purge.done> | undefined;
    void purge.done.then((r) => (finished = r));
    while (!finished) {
      await window('during');
      // a window that ended after the purge counts as "after" only in part: keep it out of both
      if (finished) windows[windows.length - 1].phase = 'after';
    }
    const result = finished;
    if (result.code !== 0) throw new Error(`npm run cli -- purge failed (${result.code}):\n${result.output}`);
    log(`  purge done in ${result.seconds.toFixed(1)} s`);
    // the window that straddled the purge's end: during, when the purge was shorter than a window; else left out
    const straddled = windows.pop()!;
    if (!windows.some((w) => w.phase === 'during')) windows.push({ ...straddled, phase: 'during' });
    for (let i = 0; i < opts.baselineAfter; i++) await window('after');
    const without = windows.filter((w) => w.phase !== 'during');
    const during = windows.filter((w) => w.phase === 'during');
    const withoutRps = median(without.map((w) => w.rps));
    const duringRps = during.length ? median(during.map((w) => w.rps)) : NaN;

    // nothing live was removed, and every live token still authenticates; a live refresh token still refreshes
    const kept = {
      tokens: await count(client, 'oauth_tokens'),
      grants: await count(client, 'oauth_grants'),
      codes: await count(client, 'oauth_authorization_codes'),
      authenticated: 0,
      probed: 0,
      refreshed: false,
    };
    const liveTokens = opts.live - opts.liveRefresh;
    for (let i = 1; i <= liveTokens; i += Math.max(1, Math.floor(liveTokens / 200))) {
      kept.probed++;
      const res = await fetch(`${service.origin}${BEARER_PATH}`, { headers: { authorization: `Bearer ${tokenText(i)}` } });
      await res.arrayBuffer();
      if (res.status === 200) kept.authenticated++;
    }

    for (const t of SCALE_TABLES) await client.query(`VACUUM ANALYZE ${t}`);
    const vacuumed = await tableSizes(client, SCALE_TABLES);
    // a plain VACUUM gives the heap's emptied tail back, but never shrinks an index file:
    // REINDEX CONCURRENTLY (no lock that blocks reads or writes) rebuilds them at the live size
    for (const t of SCALE_TABLES) await client.query(`REINDEX TABLE CONCURRENTLY ${t}`);
    const reindexed = await tableSizes(client, SCALE_TABLES);
    // the heap's space in the middle of the file comes back only with a rewrite, which locks the table: for reference
    for (const t of SCALE_TABLES) await client.query(`VACUUM FULL ${t}`);
    const rewritten = await tableSizes(client, SCALE_TABLES);
    // A live refresh token still refreshes (after the sizes: its new token is one more row)
    const refresh = await fetch(`${service.origin}/oauth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${BENCH_CLIENT.identifier}:${BENCH_CLIENT.secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshTokenText(opts.liveRefresh) }).toString(),
    });
    await refresh.arrayBuffer();
    kept.refreshed = refresh.status === 200;
    const sum = (s: Record<string, number>) => SCALE_TABLES.reduce((n, t) => n + s[t], 0);
    return {
      expired,
      live: { tokens: opts.live, refreshFamilies: opts.liveRefresh },
      purge: { seconds: result.seconds, output: result.output.trim(), removed: removedFrom(result.output) },
      windows,
      without: { rps: withoutRps, p99: median(without.map((w) => w.p99)) },
      during: { rps: duringRps, p99: during.length ? median(during.map((w) => w.p99)) : NaN, windows: during.length },
      ratio: duringRps / withoutRps,
      kept,
      sizes: SCALE_TABLES.map((t) => ({ table: t, live: liveSizes[t], beforePurge: beforeSizes[t], afterVacuum: vacuumed[t], afterReindex: reindexed[t], afterVacuumFull: rewritten[t] })),
      sizeRatioAfterVacuum: sum(vacuumed) / sum(liveSizes),
      sizeRatioAfterReindex: sum(reindexed) / sum(liveSizes),
      sizeRatioAfterVacuumFull: sum(rewritten) / sum(liveSizes),
    };
  } finally {
    await service?.stop();
    await client.end().catch(() => {});
  }
}

// ---------------------------------------------------------------- soak

/** The retention settings of the soak: seconds, so that ten minutes see many purges. */
const SOAK_SETTINGS: Record<string, string> = {
  RETENTION_INTERVAL_SECONDS: '5',
  CODE_RETENTION_SECONDS: '5',
  GRANT_RETENTION_SECONDS: '5',
  TOKEN_RETENTION_SECONDS: '5',
  SECRET_RETENTION_SECONDS: '5',
  WEBHOOK_RETENTION_SECONDS: '10',
  JOB_RETENTION_SECONDS: '10',
  AUDIT_RETENTION_DAYS: '0.0001',
  CALLBACK_RETENTION_DAYS: '0.0001',
};

interface Http {
  origin: string;
  jar: Map<string, string>;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const clientAuth = `Basic ${Buffer.from(`${BENCH_CLIENT.identifier}:${BENCH_CLIENT.secret}`).toString('base64')}`;

async function request(h: Http, method: string, url: string, body?: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; text: string; location: string | null }> {
  const res = await fetch(url.startsWith('http') ? url : `${h.origin}${url}`, {
    method,
    redirect: 'manual',
    headers: {
      ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...(h.jar.size ? { cookie: [...h.jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
      ...headers,
    },
    body: body ? form(body) : undefined,
  });
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(';')[0];
    const eq = pair.indexOf('=');
    h.jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}

const unescapeHtml = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescapeHtml(m[1])] = unescapeHtml(m[2]);
  return out;
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

class Counter {
  readonly ok: Record<string, number> = {};
  readonly failed: Record<string, number> = {};
  step(what: string, status: number, expected: number, text = ''): boolean {
    if (status === expected) {
      this.ok[what] = (this.ok[what] ?? 0) + 1;
      return true;
    }
    const key = `${what} → ${status}${status >= 400 ? ` ${text.slice(0, 80)}` : ''}`;
    this.failed[key] = (this.failed[key] ?? 0) + 1;
    return false;
  }
}

/** client_credentials: issue, use once, revoke. */
async function clientCredentialsLoop(h: Http, counter: Counter, until: number): Promise<void> {
  while (Date.now() < until) {
    const issued = await request(h, 'POST', '/oauth/tokens', { grant_type: 'client_credentials', scope: 'read' }, { authorization: clientAuth });
    if (!counter.step('client_credentials issued', issued.status, 200, issued.text)) {
      await sleep(50);
      continue;
    }
    const token = JSON.parse(issued.text).access_token as string;
    const revoked = await request(h, 'POST', '/oauth/revoke', { token }, { authorization: clientAuth });
    counter.step('access token revoked', revoked.status, 200, revoked.text);
  }
}

/** The authorization code flow through the pages (signed in once per loop), exchange, two refreshes, revoke the family. */
async function codeFlowLoop(h: Http, counter: Counter, until: number, email: string): Promise<void> {
  while (Date.now() < until) {
    const { verifier, challenge } = pkce();
    const authorize = `/oauth/authorizations/new?${form({ response_type: 'code', client_id: BENCH_CLIENT.identifier, redirect_uri: REDIRECT, scope: 'read write', state: 's', code_challenge: challenge, code_challenge_method: 'S256' })}`;
    let page = await request(h, 'GET', authorize);
    if (page.status === 200 && /name="password"/.test(page.text)) {
      const login = await request(h, 'POST', '/oauth/authorizations/login', { ...hiddenFields(page.text), email, password: BASIC_PASSWORD });
      if (!counter.step('signed in', login.status, 303, login.text) || !login.location) {
        await sleep(200);
        continue;
      }
      page = await request(h, 'GET', login.location);
    }
    if (!counter.step('consent page', page.status, 200, page.text)) {
      await sleep(50);
      continue;
    }
    const allowed = await request(h, 'POST', '/oauth/authorizations', { ...hiddenFields(page.text), decision: 'allow' });
    const code = allowed.location ? new URL(allowed.location).searchParams.get('code') : null;
    if (!counter.step('code issued', allowed.status, 303, allowed.text) || !code) continue;
    const exchanged = await request(h, 'POST', '/oauth/tokens', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, { authorization: clientAuth });
    if (!counter.step('code exchanged', exchanged.status, 200, exchanged.text)) continue;
    let refresh = JSON.parse(exchanged.text).refresh_token as string;
    let ok = true;
    for (let i = 0; i < 2 && ok; i++) {
      const refreshed = await request(h, 'POST', '/oauth/tokens', { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: clientAuth });
      ok = counter.step('refreshed', refreshed.status, 200, refreshed.text);
      if (ok) refresh = JSON.parse(refreshed.text).refresh_token as string;
    }
    if (!ok) continue;
    const revoked = await request(h, 'POST', '/oauth/revoke', { token: refresh }, { authorization: clientAuth });
    counter.step('family revoked', revoked.status, 200, revoked.text);
  }
}

async function soakRun(serverUrl: string, admin: pg.Client, opts: Options, log: (line: string) => void): Promise<SoakReport> {
  const { url } = await newDatabase(serverUrl, admin, 'soak');
  const hashKey = randomBytes(32).toString('hex');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let service: Server | undefined;
  try {
    // one user per code-flow loop: the per-user limit on live consents (100) is the user's, and each loop keeps at most one
    await seed({ url, hashKey, tokens: 1, callbackAccounts: 0, basicUsers: opts.soakLoops });
    const users = (await client.query<{ email: string }>(`SELECT email FROM users WHERE email LIKE 'basic%' ORDER BY id`)).rows.map((r) => r.email);
    const tables = (await client.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY 1`)).rows.map((r) => r.t);
    service = await startServer('service', path.join(ROOT, 'dist/src/main.js'), { DATABASE_URL: url, HASH_KEY: hashKey, OAUTH_CLIENT_LIVE_TOKENS: '100000000', ...SOAK_SETTINGS });
    const counter = new Counter();
    const samples: { t: number; counts: Record<string, number> }[] = [];
    const started = Date.now();
    const until = started + opts.soakSeconds * 1000;
    log(`soak: ${opts.soakSeconds} s, ${opts.soakLoops} client_credentials loops and ${opts.soakLoops} code-flow loops; retention ${Object.entries(SOAK_SETTINGS).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    const loops = [
      ...Array.from({ length: opts.soakLoops }, () => clientCredentialsLoop({ origin: service!.origin, jar: new Map() }, counter, until)),
      ...users.map((email) => codeFlowLoop({ origin: service!.origin, jar: new Map() }, counter, until, email)),
    ];
    const sampleEvery = Math.max(1000, (opts.soakSeconds * 1000) / 60);
    const sampler = (async () => {
      while (Date.now() < until) {
        const counts: Record<string, number> = {};
        for (const t of tables) counts[t] = await count(client, t);
        samples.push({ t: (Date.now() - started) / 1000, counts });
        const done = Object.values(counter.ok).reduce((a, b) => a + b, 0);
        if (samples.length % 6 === 0) log(`  ${samples[samples.length - 1].t.toFixed(0)} s: ${done.toLocaleString('en')} operations; oauth_tokens ${counts.oauth_tokens}, oauth_grants ${counts.oauth_grants}, oauth_authorization_codes ${counts.oauth_authorization_codes}, audit_logs ${counts.audit_logs}, events ${counts.events}`);
        await sleep(Math.min(sampleEvery, Math.max(0, until - Date.now())));
      }
    })();
    await Promise.all([...loops, sampler]);
    // after the warm-up (a fifth of the run, at least three retention periods), the two halves
    const warm = samples.filter((s) => s.t >= Math.max(opts.soakSeconds * 0.2, 3 * Number(SOAK_SETTINGS.RETENTION_INTERVAL_SECONDS)));
    const half = Math.floor(warm.length / 2);
    const rows = tables.map((table) => {
      const values = warm.map((s) => s.counts[table]);
      // medians, not maxima: the purge runs every few seconds, so each count is a sawtooth
      const firstHalfMedian = median(values.slice(0, half));
      const secondHalfMedian = median(values.slice(half));
      const max = Math.max(...values);
      return {
        table, min: Math.min(...values), max, firstHalfMedian, secondHalfMedian,
        flat: table in BOUNDED ? max <= BOUNDED[table] : secondHalfMedian <= firstHalfMedian * 1.25 + 20,
      };
    });
    return {
      seconds: opts.soakSeconds, settings: SOAK_SETTINGS, operations: counter.ok, failures: counter.failed, samples: warm.length,
      tables: rows, flat: rows.every((r) => r.flat) && warm.length >= 2,
    };
  } finally {
    await service?.stop();
    await client.end().catch(() => {});
  }
}

// ---------------------------------------------------------------- report

const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;

function markdown(r: RetentionReport): string {
  const verdict = (ok: boolean) => (r.meta.judged ? (ok ? '**met**' : '**missed**') : 'not judged (smoke)');
  const sections: string[] = [];
  const s = r.scale;
  if (s) {
    sections.push(`## 1. Scale: the purge of ${(s.expired.tokens + s.expired.codes).toLocaleString('en')} expired tokens and codes under Bearer load${r.meta.carried?.scale ? ` (run of ${r.meta.carried.scale})` : ''}

${s.expired.tokens.toLocaleString('en')} expired tokens (half revoked), ${s.expired.codes.toLocaleString('en')} used or expired codes of
${s.expired.grants.toLocaleString('en')} revoked grants, beside ${s.live.tokens.toLocaleString('en')} live tokens (${s.live.refreshFamilies.toLocaleString('en')} of them refresh families).
\`npm run cli -- purge\` took **${s.purge.seconds.toFixed(1)} s**; meanwhile \`GET ${BEARER_PATH}\` ran at 50 connections over 1,000 live tokens.

| | req/s (median) | p99 ms (median) | windows |
|---|---:|---:|---:|
| without the purge (before and after) | ${s.without.rps.toFixed(0)} | ${s.without.p99.toFixed(1)} | ${s.windows.filter((w) => w.phase !== 'during').length} |
| during the purge | ${s.during.rps.toFixed(0)} | ${s.during.p99.toFixed(1)} | ${s.during.windows} |

Throughput during the purge: **${s.ratio.toFixed(2)} ×** without it (target ${RETENTION_TARGETS.throughputDuringPurge.text}): ${verdict(s.ratio >= RETENTION_TARGETS.throughputDuringPurge.min)}.
Every window: ${s.windows.map((w) => `${w.phase} ${w.rps.toFixed(0)}`).join(', ')} req/s${s.windows.some((w) => w.non2xx || w.errors) ? ' ⚠ some answers were not 2xx' : '; every answer 200'}.

Kept: ${s.kept.tokens.toLocaleString('en')} tokens, ${s.kept.grants.toLocaleString('en')} grants, ${s.kept.codes} codes; ${s.kept.authenticated} of ${s.kept.probed} live tokens probed
still authenticate; a live refresh token ${s.kept.refreshed ? 'still refreshes' : '**no longer refreshes**'}.

What the purge printed:

\`\`\`
${s.purge.output}
\`\`\`

| table | live data | with the expired rows | after the purge and VACUUM | then REINDEX CONCURRENTLY | then VACUUM FULL |
|---|---:|---:|---:|---:|---:|
${s.sizes.map((x) => `| ${x.table} | ${mib(x.live)} | ${mib(x.beforePurge)} | ${mib(x.afterVacuum)} | ${mib(x.afterReindex)} | ${mib(x.afterVacuumFull)} |`).join('\n')}

The three tables together, against the live data: **${s.sizeRatioAfterVacuum.toFixed(2)} ×** after the purge and VACUUM,
**${s.sizeRatioAfterReindex.toFixed(2)} ×** after REINDEX TABLE CONCURRENTLY, **${s.sizeRatioAfterVacuumFull.toFixed(2)} ×** after VACUUM FULL
(target ${RETENTION_TARGETS.sizeAfterPurge.text}: after VACUUM ${verdict(s.sizeRatioAfterVacuum <= RETENTION_TARGETS.sizeAfterPurge.max)}; after the
non-blocking REINDEX ${verdict(s.sizeRatioAfterReindex <= RETENTION_TARGETS.sizeAfterPurge.max)}; after VACUUM FULL ${verdict(s.sizeRatioAfterVacuumFull <= RETENTION_TARGETS.sizeAfterPurge.max)}).
A plain VACUUM (autovacuum's) makes the removed rows' space free for new rows, but gives back to the disk only the
emptied end of a table's heap, and never shrinks an index file. Here the live tokens' rows did not stay at the start
of the table: presenting a token sets its \`used_at\` (at most once a minute), and that new row version goes where
there is room, at the end, behind the expired rows. In steady state this does not matter: the purge keeps each table
at its live size plus one retention period, and new rows reuse the freed space (the soak below). After a one-off
backlog (the first purge of a database that never had one), giving the disk back takes a rewrite: \`REINDEX TABLE
CONCURRENTLY\` for the indexes (blocks neither reads nor writes) and \`VACUUM FULL\` (locks the table) or pg_repack
(online) for the heap. docs/api.md, "Retention".`);
  }
  const k = r.soak;
  if (k) {
    sections.push(`## 2. Soak: ${k.seconds} s of issuing and revoking at full speed${r.meta.carried?.soak ? ` (run of ${r.meta.carried.soak})` : ''}

Retention settings: ${Object.entries(k.settings).map(([n, v]) => `\`${n}=${v}\``).join(', ')}; the service's own recurring purge.
Operations: ${Object.entries(k.operations).map(([n, v]) => `${n} ${v.toLocaleString('en')}`).join(', ')}.
${Object.keys(k.failures).length ? `Failures: ${Object.entries(k.failures).map(([n, v]) => `${n} × ${v}`).join('; ')}.` : 'No step failed.'}

Row counts, ${k.samples} samples after the warm-up (the first fifth):

| table | min | max | median, first half | median, second half | |
|---|---:|---:|---:|---:|---|
${k.tables.map((t) => `| ${t.table} | ${t.min.toLocaleString('en')} | ${t.max.toLocaleString('en')} | ${t.firstHalfMedian.toLocaleString('en')} | ${t.secondHalfMedian.toLocaleString('en')} | ${t.flat ? (t.table in BOUNDED ? `flat (keeps ${BOUNDED[t.table]})` : 'flat') : '**grows**'} |`).join('\n')}

Every table ${RETENTION_TARGETS.soakFlat.text}: ${verdict(k.flat)}.`);
  }
  return `# Retention benchmark (${r.meta.mode}, ${r.meta.date})

Node ${r.meta.node}, ${r.meta.cpus}, PostgreSQL ${r.meta.postgres}; ${r.meta.totalSeconds.toFixed(0)} s.
\`npm run bench:retention\` (bench/retention.ts). **Machine caveat:** 2 cores shared with other work; the service,
PostgreSQL, the purge, the load generator and the benchmark all run on them. The ratio compares windows of the same
run, minutes apart.

${sections.join('\n\n')}

How: the service built (\`node dist/src/main.js\`, NODE_ENV=production, LOG_LEVEL=warn) on a database of its own per part.
The scale part's service runs no job engine (WORKER=false), so that the only purge is the CLI's, started by the bench;
its batches and pauses are the defaults (RETENTION_BATCH_SIZE, RETENTION_PAUSE_MS). The soak's service runs its engine,
and so its recurring purge, with the settings above.
`;
}

function previousReport(opts: Options): RetentionReport | undefined {
  try {
    const report = JSON.parse(readFileSync(path.join(opts.out, 'retention.json'), 'utf8')) as RetentionReport;
    return report.meta.mode === opts.mode ? report : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the scale run and the soak, each on a database of its own; writes <out>/retention.{json,md}. */
export async function runRetentionBench(opts: Options, log: (line: string) => void = console.log): Promise<RetentionReport> {
  const started = Date.now();
  mkdirSync(opts.out, { recursive: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-retention-'));
  const serverUrl = process.env.BENCH_DATABASE_URL ?? (await throwawayPostgres()).url;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const postgres = (await admin.query('SHOW server_version')).rows[0].server_version as string;
    const scale = opts.parts.has('scale') ? await scaleRun(serverUrl, admin, opts, tmp, log) : undefined;
    if (scale) log(`scale: ${scale.ratio.toFixed(2)} × throughput during the purge; sizes ${scale.sizeRatioAfterVacuum.toFixed(2)} × live after VACUUM, ${scale.sizeRatioAfterReindex.toFixed(2)} × after REINDEX, ${scale.sizeRatioAfterVacuumFull.toFixed(2)} × after VACUUM FULL`);
    const soak = opts.parts.has('soak') ? await soakRun(serverUrl, admin, opts, log) : undefined;
    // --only: the parts not run keep their figures from the last report in the folder (of the same mode), saying when they ran
    const previous = previousReport(opts);
    const carried: Partial<Record<Part, string>> = {};
    for (const part of PARTS) if (!opts.parts.has(part) && previous?.[part]) carried[part] = previous.meta.carried?.[part] ?? previous.meta.date;
    if (soak) log(`soak: ${soak.flat ? 'every table flat' : `growing: ${soak.tables.filter((t) => !t.flat).map((t) => t.table).join(', ')}`}`);
    const report: RetentionReport = {
      meta: {
        date: new Date().toISOString(), mode: opts.mode, judged: opts.mode !== 'smoke', node: process.version,
        cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`, postgres, totalSeconds: (Date.now() - started) / 1000,
        ...(Object.keys(carried).length ? { carried } : {}),
      },
      scale: scale ?? (carried.scale ? previous?.scale : undefined),
      soak: soak ?? (carried.soak ? previous?.soak : undefined),
    };
    writeFileSync(path.join(opts.out, 'retention.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(opts.out, 'retention.md'), markdown(report));
    log(`retention report: ${path.join(opts.out, 'retention.md')} (${report.meta.totalSeconds.toFixed(0)} s)`);
    return report;
  } finally {
    for (const row of (await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'bench_retention_%_${process.pid}_%'`)).rows) {
      await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`).catch(() => {});
    }
    await admin.end();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchMain('retention', PARTS, (args, log) => runRetentionBench({ ...retentionOptions(args.mode, args.out), ...(args.only ? { parts: args.only } : {}) }, log));
}
