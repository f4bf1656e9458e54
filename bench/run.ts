// `npm run bench` — the benchmark harness (issue 6). Starts what it needs (a
// throwaway PostgreSQL unless BENCH_DATABASE_URL is set, the service as a built
// production process, the reference servers: ceiling, floor, list floor, and the peer: a stock
// oidc-provider, bench/peer.ts), seeds
// the data, runs the scenarios alternating with the references round after round,
// at each of two loads (load from a separate autocannon process), and writes
// bench/results/latest.{md,json} and ratios.svg. Then the events (bench/events.ts) and the
// callback lifecycle (bench/voice.ts), retention (bench/retention.ts), scaling (bench/scaling.ts: pgbouncer,
// several web processes, CPU per request) and ours on the embedded PGlite against the peer (bench/peer-pglite.ts),
// each on a database of its own (with --only: when named, `--only events`, `--only voice`, `--only retention`,
// `--only scaling`, `--only pglite`; --only naming parts alone skips the scenarios).
//
//   npm run bench                    full run (100,000 tokens, 3 rounds of 6 s at 10 and at 50 connections; ~16 min)
//   npm run bench -- --quick         a few minutes (3 rounds of 1 s)
//   npm run bench -- --smoke --out D CI: tiny data, 1 round, judges nothing
//   options: --tokens N, --rounds N, --duration S, --connections 10,50 (one or more), --workers N,
//            --pool N, --only 1,2,4 (scenario ids), --refresh-tokens N (scenario 11), --cpu-prof (service profile
//            into <out>/profiles), --executor compiled|interpreter (the service's GraphQL executor),
//            --node-args '<options>' (the service's node options; its output is kept in <out>/service.log),
//            --heap-sampling (what each scenario allocates, garbage included: <out>/profiles/*.heapprofile), --out DIR
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/create-db';
import { applyMigrations } from '../src/db/schema-engine';
import type { CursorCodec } from '../src/domain/pagination';
import { createServices } from '../src/domain/services';
import type { LoadResult, LoadSpec, RequestVariant } from './load';
import { cleanupSync, runLoader, startServer, throwawayPostgres, type Server } from './processes';
import { eventsOptions, runEventsBench } from './events';
import { retentionOptions, runRetentionBench } from './retention';
import { runVoiceBench, voiceOptions } from './voice';
import { runScalingBench, scalingOptions } from './scaling';
import { pglitePeerOptions, runPglitePeerBench } from './peer-pglite';
import { checkPeerTokensActive, issuePeerTokens, PEER_INTROSPECTION_PATH, PEER_TOKEN_PATH, peerInfo, startPeer } from './peer';
import { pgbouncerBinary } from './pgbouncer';
import { median } from './stats';
import { BENCH_CLIENT, bearerLoad, clientCredentialsLoad, introspectionLoad, REQUESTER_PHONE, refreshTokenText, seed, spread, tokenCreationLoad, tokenText, type Fixture } from './seed';
import { TARGETS, writeReport, type BenchReport, type CellResult, type LoadFigures, type ReferenceKey, type ReferenceSummary, type ScenarioSummary } from './report';

const ROOT = path.resolve(__dirname, '../..');

/** The service's live client_credentials tokens per client in the run (the default, 100,000, is reached within it) */
const BENCH_LIVE_TOKENS = 100_000_000;

// ---------------------------------------------------------------- options

export interface Options {
  mode: 'full' | 'quick' | 'smoke';
  tokens: number;
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** every scenario and reference is measured at each of these connection counts */
  connections: number[];
  pipelining: number;
  workers: number;
  pool: number;
  callbackAccounts: number;
  basicUsers: number;
  basicRate: number;
  /** single-use refresh tokens seeded for scenario 11 */
  refreshTokens: number;
  only?: Set<string>;
  cpuProf: boolean;
  /** V8's sampling heap profiler around each scenario measurement: <out>/profiles/<scenario>-<connections>c-r<round>.heapprofile */
  heapSampling: boolean;
  /** extra Node/V8 options for the service (e.g. --trace-gc); its output goes to <out>/service.log */
  nodeArgs: string[];
  /** the service's GraphQL executor (GRAPHQL_EXECUTOR): `interpreter` is the baseline of the compiled one */
  executor: 'compiled' | 'interpreter';
  out: string;
}

function executorOf(raw: string | undefined): Options['executor'] {
  if (raw === undefined || raw === 'compiled' || raw === 'interpreter') return raw ?? 'compiled';
  throw new Error(`--executor takes compiled or interpreter, got "${raw}"`);
}

function parseArgs(argv: string[]): Options {
  const flag = (name: string) => argv.includes(`--${name}`);
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) return argv[i + 1];
    const eq = argv.find((a) => a.startsWith(`--${name}=`));
    return eq?.slice(name.length + 3);
  };
  const num = (name: string, fallback: number) => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw.replace(/_/g, ''));
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${raw}"`);
    return n;
  };
  const mode = flag('smoke') ? 'smoke' : flag('quick') ? 'quick' : 'full';
  const connections = (value('connections') ?? '10,50').split(',').map((raw) => {
    const n = Number(raw.trim());
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--connections takes positive integers separated by commas (e.g. 10,50), got "${value('connections')}"`);
    return n;
  });
  if (new Set(connections).size !== connections.length) throw new Error('--connections: each connection count once');
  // Single-use and rate-limited material is consumed by each measurement: the refresh
  // tokens and callback accounts of the presets are per load (Basic users: see main()).
  const loads = connections.length;
  const preset = {
    full: { tokens: 100_000, rounds: 3, duration: 6, warmup: 3, callbackAccounts: 2000, basicUsers: 10, basicRate: 50, refreshTokens: 80_000 },
    quick: { tokens: 100_000, rounds: 3, duration: 1, warmup: 1, callbackAccounts: 1000, basicUsers: 10, basicRate: 50, refreshTokens: 30_000 },
    smoke: { tokens: 200, rounds: 1, duration: 1, warmup: 0.3, callbackAccounts: 200, basicUsers: 2, basicRate: 10, refreshTokens: 5_000 },
  }[mode];
  const only = value('only');
  return {
    mode,
    tokens: Math.round(num('tokens', preset.tokens)),
    rounds: Math.round(num('rounds', preset.rounds)),
    durationSeconds: num('duration', preset.duration),
    warmupSeconds: preset.warmup,
    connections,
    pipelining: 1,
    workers: Math.round(num('workers', 1)),
    pool: Math.round(num('pool', 10)),
    callbackAccounts: Math.round(num('callback-accounts', preset.callbackAccounts * loads)),
    basicUsers: preset.basicUsers,
    basicRate: num('basic-rate', preset.basicRate),
    refreshTokens: Math.round(num('refresh-tokens', preset.refreshTokens * loads)),
    only: only ? new Set(only.split(',').map((s) => s.trim())) : undefined,
    cpuProf: flag('cpu-prof'),
    executor: executorOf(value('executor')),
    nodeArgs: (value('node-args') ?? '').split(' ').filter(Boolean),
    heapSampling: flag('heap-sampling'),
    out: path.resolve(value('out') ?? path.join(ROOT, 'bench/results')),
  };
}

// ---------------------------------------------------------------- processes

/** Resident set size of a process (Linux /proc), in bytes; undefined elsewhere. */
function rssOf(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number | undefined {
  if (!pid) return undefined;
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- scenarios

export interface Scenario {
  id: string;
  name: string;
  /** the load; `beside` runs at the same time (scenario 8) */
  load: Omit<LoadSpec, 'origin' | 'connections' | 'pipelining' | 'durationSeconds'>;
  beside?: Omit<LoadSpec, 'origin' | 'pipelining' | 'durationSeconds'>;
  /** scenario 8: the Basic users of a measurement (fresh ones each time, so each pays its KDFs) */
  besideVariants?: (measurement: number) => RequestVariant[];
  /** callback accounts: where the cycle goes on in the next measurement */
  rotating?: boolean;
  /** each variant works once (refresh tokens): the next measurement also skips those that may have been in flight */
  singleUse?: boolean;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const basicAuth = (email: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}` });

function scenarios(f: Fixture, opts: Options, cursors: CursorCodec): Scenario[] {
  const tokenId = (i: number) => String(BigInt(f.firstTokenId) + BigInt(i - 1));
  // scenario 1/2: a hundred different tokens, as many clients would present
  const scenario1 = bearerLoad(f.tokens);
  const hundred = scenario1.variants;
  const admin = bearer(tokenText(1));
  const gql = (query: string) => JSON.stringify({ query });
  const deepAfter = cursors.encode(BigInt(tokenId(Math.max(1, Math.floor(f.tokens * 0.95)))));
  const listPath = '/api/v2/oauth/tokens.json?page%5Bsize%5D=100';
  return [
    {
      id: '1', name: 'REST GET /oauth/tokens/current.json (Bearer)',
      load: scenario1,
    },
    {
      id: '2', name: 'GraphQL { currentOAuthToken { id scopes } } (Bearer)',
      load: { method: 'POST', path: '/graphql', body: gql('{ currentOAuthToken { id scopes } }'), variants: hundred },
    },
    {
      id: '3', name: 'REST GET /oauth/tokens/{id}.json (admin Bearer)',
      load: { method: 'GET', path: '/', headers: admin, variants: spread(1000, f.tokens).map((i) => ({ path: `/api/v2/oauth/tokens/${tokenId(i)}.json` })) },
    },
    {
      id: '4a', name: 'REST list, cursor, page[size]=100: first page',
      load: { method: 'GET', path: listPath, headers: admin },
    },
    {
      id: '4b', name: `REST list, cursor, page[size]=100: page after 95% of ${f.tokens.toLocaleString('en')}`,
      load: { method: 'GET', path: `${listPath}&page%5Bafter%5D=${deepAfter}`, headers: admin },
    },
    {
      id: '5', name: 'GraphQL oauthTokens(first: 100) { … client { name } user { email } }',
      load: {
        method: 'POST', path: '/graphql', headers: admin,
        body: gql('{ oauthTokens(first: 100) { edges { node { id client { name } user { email } } } } }'),
      },
    },
    {
      id: '6', name: 'REST POST /oauth/tokens',
      load: tokenCreationLoad(f),
    },
    {
      id: '7', name: `REST POST /channels/voice/callback_requests (over ${f.callback.length} accounts)`,
      rotating: true,
      load: {
        method: 'POST', path: '/api/v2/channels/voice/callback_requests.json',
        variants: f.callback.map((c) => ({
          headers: bearer(c.token),
          body: JSON.stringify({ callback_request: { phone_number_id: Number(c.phoneNumberId), requester_phone_number: REQUESTER_PHONE } }),
        })),
      },
    },
    {
      id: '9', name: 'POST /oauth/introspect (client Basic, a hundred tokens)',
      load: introspectionLoad(BENCH_CLIENT, spread(100, f.tokens).map(tokenText)),
    },
    {
      id: '10', name: 'POST /oauth/tokens grant_type=client_credentials (client Basic)',
      load: clientCredentialsLoad(BENCH_CLIENT),
    },
    {
      id: '11', name: `POST /oauth/tokens grant_type=refresh_token (rotation; ${f.refreshTokens.toLocaleString('en')} single-use tokens)`,
      rotating: true, singleUse: true,
      load: {
        method: 'POST', path: '/oauth/tokens', headers: { ...FORM, ...basicAuth(BENCH_CLIENT.identifier, BENCH_CLIENT.secret) },
        variants: Array.from({ length: f.refreshTokens }, (_, i) => ({ body: form({ grant_type: 'refresh_token', refresh_token: refreshTokenText(i + 1) }) })),
      },
    },
    {
      id: '8', name: `Basic auth at ${opts.basicRate} req/s (${opts.basicUsers} new users each) beside scenario 1`,
      load: { method: 'GET', path: '/api/v2/oauth/tokens/current.json', variants: hundred },
      beside: {
        method: 'POST', path: '/graphql', body: gql('{ me { id email } }'), connections: Math.max(1, Math.min(50, Math.floor(opts.basicRate))), overallRate: opts.basicRate,
      },
      // opts.basicUsers users per measurement, never reused: each measurement verifies
      // each of its users' passwords once (the KDF), then hits the 60 s cache
      besideVariants: (m) => f.basic.slice(m * opts.basicUsers, (m + 1) * opts.basicUsers).map((b) => ({ headers: basicAuth(b.email, b.password) })),
    },
  ];
}

// ---------------------------------------------------------------- plan

/** The scenarios, in the order scenarios() lists them (the plan and its duration are known before the seed). */
const SCENARIO_IDS = ['1', '2', '3', '4a', '4b', '5', '6', '7', '9', '10', '11', '8'];
/** scenarios with a load beside them: measured alone right before (`<id>:alone`) */
const WITH_BESIDE = new Set(['8']);
const ALONE = ':alone';
/** the list scenarios: 4a and 5 are compared with the list floor, 4b with its deep variant (the same page) */
const LIST_SCENARIOS = new Set(['4a', '4b', '5']);
const listFloorOf = (id: string): ReferenceKey => (id === '4b' ? 'list-floor-deep' : 'list-floor');
/** the scenarios judged against the peer (issue 26), and its reference measured before each one's group */
const PEER_OF: Record<string, ReferenceKey> = { '9': 'peer-introspect', '10': 'peer-cc' };
/** live tokens of the peer that peer-introspect introspects, as scenario 9 introspects a hundred of ours */
const PEER_TOKENS = 100;

interface Group {
  /** scenario ids */
  scenarios: string[];
  /** measured before the group's scenarios, at each load */
  references: ReferenceKey[];
  /** what is measured after the references, in order */
  keys: string[];
}

const chooses = (opts: Options, id: string) => !opts.only || opts.only.has(id) || opts.only.has(id.replace(/[ab]$/, ''));

/**
 * Groups of three scenarios; the list floors are measured only before a group that holds a list
 * scenario, the peer's references only before a group that holds scenario 9 (peer-introspect) or 10 (peer-cc).
 */
function plan(ids: string[]): Group[] {
  const groups: Group[] = [];
  for (let i = 0; i < ids.length; i += 3) {
    const scenarios = ids.slice(i, i + 3);
    const references: ReferenceKey[] = ['floor', 'ceiling'];
    for (const key of new Set(scenarios.filter((id) => LIST_SCENARIOS.has(id)).map(listFloorOf))) references.push(key);
    for (const id of scenarios) if (PEER_OF[id]) references.push(PEER_OF[id]);
    groups.push({ scenarios, references, keys: scenarios.flatMap((id) => (WITH_BESIDE.has(id) ? [id + ALONE, id] : [id])) });
  }
  return groups;
}

/** Wall time the run should take: measurements, warm-up, seed and start-up (per-measurement overheads measured on 2 cores). */
function expectedSeconds(opts: Options, groups: Group[]): number {
  const perRound = groups.reduce((n, g) => n + g.references.length + g.keys.length, 0) * opts.connections.length;
  const warmups = new Set(groups.flatMap((g) => [...g.references, ...g.scenarios.filter((id) => id !== '7')])).size;
  const setup = 15 + (opts.tokens + opts.refreshTokens) / 20_000;
  // peer-introspect: a hundred tokens issued before each measurement and checked after it (about a second)
  const peerIntrospections = groups.filter((g) => g.references.includes('peer-introspect')).length * (opts.rounds * opts.connections.length + 1);
  return opts.rounds * perRound * (opts.durationSeconds + 0.5) + warmups * (opts.warmupSeconds + 1) + setup + peerIntrospections;
}

const minutes = (seconds: number) => (seconds < 120 ? `${seconds.toFixed(0)} s` : `${(seconds / 60).toFixed(1)} min`);

// ---------------------------------------------------------------- measuring

interface HeapNode {
  selfSize: number;
  children?: HeapNode[];
}

/** Bytes a sampling heap profile estimates were allocated in all (its tree's self sizes). */
function allocatedBytes(file: string): number {
  const sum = (n: HeapNode): number => n.selfSize + (n.children ?? []).reduce((s, c) => s + sum(c), 0);
  return sum((JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode }).head);
}


interface Stats {
  sqlStatements: number;
  /** requests answered (absent from older services) */
  requests?: number;
  rss: number;
}

async function stats(origin: string): Promise<Stats> {
  const res = await fetch(`${origin}/__bench/stats`);
  if (!res.ok) throw new Error(`GET /__bench/stats answered ${res.status}: is BENCH_MODE on?`);
  return (await res.json()) as Stats;
}

/** Stats once the requests still in flight when the load stopped are answered (counters still for 100 ms). */
async function settledStats(origin: string): Promise<Stats> {
  let last = await stats(origin);
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await stats(origin);
    if (now.sqlStatements === last.sqlStatements && now.requests === last.requests) return now;
    last = now;
  }
  return last;
}

/** The parts after the scenarios, each on a database of its own (with --only, those named). */
async function otherParts(opts: Options, log: (line: string) => void): Promise<void> {
  // what events cost and how fast they leave (bench/events.ts)
  if (chooses(opts, 'events')) await runEventsBench(eventsOptions(opts.mode, opts.out), log);
  // the callback lifecycle (bench/voice.ts): offer latency, dispatch throughput, the queue read against the list floor
  if (chooses(opts, 'voice')) await runVoiceBench(voiceOptions(opts.mode, opts.out), log);
  // storage stays bounded (bench/retention.ts): the purge of a backlog under Bearer load, and a soak with short retention
  if (chooses(opts, 'retention')) await runRetentionBench(retentionOptions(opts.mode, opts.out), log);
  // behind pgbouncer and over several web processes (bench/scaling.ts): ratios, and CPU per request for the capacity table
  if (chooses(opts, 'scaling')) {
    if (pgbouncerBinary()) await runScalingBench(scalingOptions(opts.mode, opts.out), log);
    else log('scaling: skipped — pgbouncer not found (apt-get install pgbouncer); bench/results/scaling.* left as they were');
  }
  // ours on the embedded PGlite default against the same peer, no target (bench/peer-pglite.ts)
  if (chooses(opts, 'pglite')) await runPglitePeerBench(pglitePeerOptions(opts.mode, opts.out), log);
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const log = (line: string) => console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}`);
  const groups = plan(SCENARIO_IDS.filter((id) => chooses(opts, id)));
  // --only with no scenario (e.g. --only scaling): the named parts alone, latest.* left as they were
  if (!groups.length) return otherParts(opts, log);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-run-'));
  mkdirSync(opts.out, { recursive: true });
  const expected = expectedSeconds(opts, groups);
  log(
    `mode ${opts.mode}: ${opts.tokens.toLocaleString('en')} tokens, ${opts.rounds} round(s) of ${opts.durationSeconds} s at ${opts.connections.join(' and ')} connections, pipelining ${opts.pipelining}, ${opts.executor} GraphQL executor; ` +
      `expected duration ≈ ${minutes(expected)}`,
  );
  // each load measures every scenario once per round, so each consumes its own share of these
  const measurementsOf8 = opts.rounds * opts.connections.length + 1;

  try {
    // 1. database
    let url = process.env.BENCH_DATABASE_URL;
    let pgSettings = 'external server (BENCH_DATABASE_URL)';
    if (!url) {
      const pgServer = await throwawayPostgres();
      url = pgServer.url;
      pgSettings = pgServer.settings;
      log(`started a throwaway PostgreSQL (${pgSettings})`);
    }
    const probe = new pg.Client({ connectionString: url });
    await probe.connect();
    const pgVersion = (await probe.query('SHOW server_version')).rows[0].server_version as string;
    const tables = Number((await probe.query(`SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'`)).rows[0].n);
    await probe.end();
    if (tables > 0) throw new Error('the benchmark database must be empty (BENCH_DATABASE_URL points at a database with tables)');
    const hashKey = randomBytes(32).toString('hex');
    const common = { DATABASE_URL: url, HASH_KEY: hashKey, DB_POOL_SIZE: String(opts.pool) };
    const migrator = await createDb({ databaseUrl: url, poolSize: 2 });
    await applyMigrations(migrator.migrationFactory());
    // the scenarios' cursors, from the service's own codec: the composition root over the configuration the service reads
    const config = loadConfig(common);
    const { cursors } = createServices({ db: migrator, hashKey: config.hashKey, limits: config.limits });
    await migrator.close();

    // 2. seed
    // Basic users: a fresh set for the warm-up and for each measurement of scenario 8
    const fixture = await seed({
      url, hashKey, tokens: opts.tokens, callbackAccounts: opts.callbackAccounts, basicUsers: opts.basicUsers * measurementsOf8, log,
      refreshTokens: chooses(opts, '11') ? opts.refreshTokens : 0,
    });
    log(`seeded ${opts.tokens.toLocaleString('en')} tokens and ${opts.callbackAccounts} callback accounts in ${fixture.seconds.toFixed(1)} s (hashes by ${fixture.hashedBy})`);

    // 3. servers (same Node, NODE_ENV=production, LOG_LEVEL=warn)
    const profiles = path.join(opts.out, 'profiles');
    if (opts.cpuProf || opts.heapSampling) mkdirSync(profiles, { recursive: true });
    const [service, ceiling, floor, listFloor, peer] = await Promise.all([
      // OAUTH_CLIENT_LIVE_TOKENS: scenario 10 issues ~4,000 two-hour tokens a second to one client, past the
      // default safety valve of 100,000 live ones in a run (then 429s would be measured, not grants)
      startServer('service', path.join(ROOT, 'dist/src/main.js'), {
        ...common, BENCH_MODE: 'true', WEB_CONCURRENCY: String(opts.workers), GRAPHQL_EXECUTOR: opts.executor, OAUTH_CLIENT_LIVE_TOKENS: String(BENCH_LIVE_TOKENS),
      }, [...opts.nodeArgs, ...(opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [])]),
      startServer('ceiling', path.join(__dirname, 'references/ceiling.js'), {}),
      startServer('floor', path.join(__dirname, 'references/floor.js'), common),
      startServer('list floor', path.join(__dirname, 'references/list-floor.js'), common),
      startPeer(),
    ]);
    const peerMeta = peerInfo();
    log(`service (pid ${service.child.pid}, ${opts.workers} worker(s), pool ${opts.pool}), ceiling, floor, list floor and the peer (${peerMeta.name} ${peerMeta.version}) listening`);

    const all = scenarios(fixture, opts, cursors);
    if (all.map((s) => s.id).join() !== SCENARIO_IDS.join() || all.some((s) => !!s.beside !== WITH_BESIDE.has(s.id))) {
      throw new Error('bench/run.ts: SCENARIO_IDS and WITH_BESIDE must list the scenarios as scenarios() defines them');
    }
    const chosen = all.filter((s) => chooses(opts, s.id));
    const scenarioLoad = (id: string) => all.find((s) => s.id === id)!.load;
    const refs: Record<ReferenceKey, Omit<LoadSpec, 'origin' | 'connections' | 'pipelining' | 'durationSeconds'>> = {
      ceiling: { method: 'GET', path: '/ceiling' },
      floor: { method: 'GET', path: '/floor', variants: spread(100, fixture.tokens).map((i) => ({ headers: bearer(tokenText(i)) })) },
      // the same request as scenario 4a (first page) and 4b (deep page), to the list floor
      'list-floor': { ...scenarioLoad('4a') },
      'list-floor-deep': { ...scenarioLoad('4b') },
      // the requests of scenarios 10 and 9 (same headers, same body), at the peer's endpoints;
      // peer-introspect's hundred tokens are issued right before each of its measurements (measure())
      'peer-cc': { ...scenarioLoad('10'), path: PEER_TOKEN_PATH },
      'peer-introspect': { ...scenarioLoad('9'), path: PEER_INTROSPECTION_PATH, variants: [] },
    };
    const servers: Record<ReferenceKey, Server> = { ceiling, floor, 'list-floor': listFloor, 'list-floor-deep': listFloor, 'peer-cc': peer, 'peer-introspect': peer };
    const isReference = (key: string): key is ReferenceKey => key in refs;
    // the list floor must read the rows the list scenarios return, or its ratios mean nothing
    for (const [id, key] of [['4a', 'list-floor'], ['4b', 'list-floor-deep']] as const) {
      if (!groups.some((g) => g.references.includes(key))) continue;
      const ids = async (origin: string) => {
        const { method, path: p, headers } = refs[key];
        const res = await fetch(`${origin}${p}`, { method, headers });
        const body = (await res.json()) as { tokens?: { id: number }[] };
        if (!res.ok || !body.tokens?.length) throw new Error(`${origin}${p} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
        return body.tokens.map((t) => t.id).join();
      };
      if ((await ids(service.origin)) !== (await ids(listFloor.origin))) throw new Error(`the list floor does not return the tokens of scenario ${id}`);
    }
    // the peer must issue (opaque tokens) and introspect them as active, or its ratios mean nothing
    if (groups.some((g) => g.references.some((key) => key.startsWith('peer-')))) {
      await checkPeerTokensActive(peer, await issuePeerTokens(peer, PEER_TOKENS));
      log(`the peer issued ${PEER_TOKENS} opaque tokens and introspected each as active`);
    }
    const offsets = new Map<string, number>();
    let besideMeasurements = 0;

    // A scenario with a load beside it is measured twice in a row: `<id>:alone` (its own
    // load only) right before `<id>` (both loads), so that the loss it reports compares
    // two measurements seconds apart, not minutes (the machine's speed drifts in between).
    const measure = async (key: string, round: number, group: number, connections: number, duration: number): Promise<CellResult> => {
      const alone = key.endsWith(ALONE) ? chosen.find((s) => s.id + ALONE === key) : undefined;
      const scenario = alone ? { ...alone, beside: undefined } : chosen.find((s) => s.id === key);
      const server = isReference(key) ? servers[key] : service;
      const base = { origin: server.origin, connections, pipelining: opts.pipelining, durationSeconds: duration };
      let spec: LoadSpec = scenario ? { ...base, ...scenario.load } : { ...base, ...refs[key as ReferenceKey] };
      // The peer's default adapter is an LRU of 1,000 to 2,000 entries: peer-cc's thousands of tokens push
      // earlier ones out long before their TTL. A hundred fresh ones before each measurement, checked after it.
      const peerTokens = key === 'peer-introspect' ? await issuePeerTokens(peer, PEER_TOKENS) : undefined;
      if (peerTokens) spec = { ...spec, variants: peerTokens.map((token) => ({ body: form({ token }) })) };
      if (scenario?.rotating && spec.variants) {
        // each callback account takes one request per cycle, across measurements (and loads)
        const at = offsets.get(key) ?? 0;
        spec = { ...spec, variants: [...spec.variants.slice(at), ...spec.variants.slice(0, at)] };
      }
      const before = server === service ? await stats(service.origin) : undefined;
      let peak = 0;
      const pid = server.child.pid;
      const poll = setInterval(() => (peak = Math.max(peak, rssOf(pid) ?? 0)), 200);
      const loads: Promise<LoadResult & { issued?: number }>[] = [runLoader(spec, tmp)];
      if (scenario?.beside) {
        const variants = scenario.besideVariants?.(besideMeasurements++ % measurementsOf8);
        loads.push(runLoader({ ...scenario.beside, variants, origin: server.origin, pipelining: 1, durationSeconds: duration } as LoadSpec, tmp));
      }
      const sampling = opts.heapSampling && scenario && server === service && round > 0;
      if (sampling) await fetch(`${service.origin}/__bench/heap-sampling/start`, { method: 'POST' });
      const [main, beside] = await Promise.all(loads);
      clearInterval(poll);
      if (sampling) {
        const res = await fetch(`${service.origin}/__bench/heap-sampling/stop`, { method: 'POST' });
        const file = path.join(profiles, `${key.replace(':', '-')}-${connections}c-r${round}.heapprofile`);
        writeFileSync(file, await res.text());
        log(`heap sampling of ${key} at ${connections} connections: ${file} (${(allocatedBytes(file) / 1e6 / Math.max(main.responses, 1)).toFixed(2)} MB allocated per response)`);
      }
      const after = server === service ? await settledStats(service.origin) : undefined;
      if (peerTokens) await checkPeerTokensActive(peer, peerTokens);
      // a single-use variant may have been sent without its answer being counted: skip one per connection
      const used = main.responses + (scenario?.singleUse ? connections : 0);
      if (scenario?.rotating && spec.variants) offsets.set(key, ((offsets.get(key) ?? 0) + used) % spec.variants.length);
      // requests the service received (in-flight ones at the end included), else the responses autocannon saw
      const responses = before?.requests !== undefined && after?.requests !== undefined ? after.requests - before.requests : main.responses + (beside?.responses ?? 0);
      peak = Math.max(peak, rssOf(pid) ?? 0, after?.rss ?? 0);
      return {
        key, round, group, connections, ...main,
        sqlPerRequest: before && after && responses ? (after.sqlStatements - before.sqlStatements) / responses : undefined,
        peakRss: peak || undefined,
        beside: beside && { rps: beside.rps, p50: beside.p50, p99: beside.p99, ok: beside.ok, non2xx: beside.non2xx, errors: beside.errors },
      };
    };

    // 4. warm-up: JIT, plan caches, pools (at the largest load, so every pool connection opens)
    const busiest = Math.max(...opts.connections);
    const warmed = new Set<string>();
    for (const g of groups) {
      for (const key of [...g.references, ...g.scenarios]) {
        if (key === '7' || warmed.has(key)) continue; // 7: its budget is for the measurements
        warmed.add(key);
        await measure(key, 0, -1, busiest, opts.warmupSeconds);
      }
    }
    log('warmed up');

    // 5. rounds: for each group and each load, the references, then the group's scenarios (A B A B …)
    const cells: CellResult[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      for (const [g, group] of groups.entries()) {
        for (const connections of opts.connections) {
          for (const key of [...group.references, ...group.keys]) {
            const cell = await measure(key, round, g, connections, opts.durationSeconds);
            cells.push(cell);
            const extra = cell.beside ? `; beside: ${cell.beside.rps.toFixed(0)} req/s, p50 ${cell.beside.p50.toFixed(1)} ms` : '';
            const bad = cell.non2xx || cell.errors ? ` (${cell.non2xx} non-2xx ${JSON.stringify(cell.statusCodes)}, ${cell.errors} errors)` : '';
            log(`round ${round} ${String(connections).padStart(3)} conn ${key.padEnd(15)} ${cell.rps.toFixed(0).padStart(6)} req/s  p50 ${cell.p50.toFixed(2)} ms  p99 ${cell.p99.toFixed(2)} ms${cell.sqlPerRequest === undefined ? '' : `  SQL/req ${cell.sqlPerRequest.toFixed(2)}`}${extra}${bad}`);
          }
        }
      }
    }
    const peakRssOverall = rssOf(service.child.pid, 'VmHWM');

    // a CPU profile is written on a clean exit only: give the service its full shutdown time
    await Promise.all([service.stop(opts.cpuProf ? 30_000 : 3000), ceiling.stop(), floor.stop(), listFloor.stop(), peer.stop()]);
    if (opts.nodeArgs.length) writeFileSync(path.join(opts.out, 'service.log'), service.output.join(''));

    // 6. summarise: every ratio against the references measured just before it, in the same round, group and load
    const sameGroup = (cell: CellResult, key: string) =>
      cells.find((c) => c.key === key && c.round === cell.round && c.group === cell.group && c.connections === cell.connections);
    const sameRound = (cell: CellResult, key: string) => cells.find((c) => c.key === key && c.round === cell.round && c.connections === cell.connections);
    const summaries: ScenarioSummary[] = chosen.map((s) => {
      const loads = opts.connections.map((connections): LoadFigures => {
        const mine = cells.filter((c) => c.key === s.id && c.connections === connections);
        const ratio = (other: (c: CellResult) => CellResult | undefined, field: 'rps' | 'p50' = 'rps') =>
          median(mine.map((c) => c[field] / (other(c)?.[field] ?? NaN)));
        const l: LoadFigures = {
          connections,
          rps: median(mine.map((c) => c.rps)), p50: median(mine.map((c) => c.p50)), p99: median(mine.map((c) => c.p99)),
          vsFloor: ratio((c) => sameGroup(c, 'floor')), vsCeiling: ratio((c) => sameGroup(c, 'ceiling')),
          sqlPerRequest: median(mine.map((c) => c.sqlPerRequest ?? NaN)),
          peakRss: Math.max(0, ...mine.map((c) => c.peakRss ?? 0)) || undefined,
          non2xx: mine.reduce((n, c) => n + c.non2xx, 0), errors: mine.reduce((n, c) => n + c.errors, 0),
        };
        if (LIST_SCENARIOS.has(s.id)) l.vsListFloor = ratio((c) => sameGroup(c, listFloorOf(s.id)));
        if (PEER_OF[s.id]) l.vsPeer = ratio((c) => sameGroup(c, PEER_OF[s.id]));
        if (s.id === '2') l.vsScenario1 = ratio((c) => sameRound(c, '1'));
        if (s.id === '8') {
          l.vsScenario1 = ratio((c) => sameRound(c, s.id + ALONE));
          l.basicP50 = median(mine.map((c) => c.beside?.p50 ?? NaN));
          l.basicRps = median(mine.map((c) => c.beside?.rps ?? NaN));
        }
        if (s.id === '4b') l.deepOverFirst = ratio((c) => sameRound(c, '4a'), 'p50');
        return l;
      });
      return { id: s.id, name: s.name, target: TARGETS[s.id]?.text ?? '', loads, rounds: cells.filter((c) => c.key === s.id || c.key === s.id + ALONE) };
    });
    const references: ReferenceSummary[] = (Object.keys(refs) as ReferenceKey[]).flatMap((key) =>
      opts.connections.flatMap((connections) => {
        const mine = cells.filter((c) => c.key === key && c.connections === connections);
        if (!mine.length) return [];
        return [{
          key, connections, rps: median(mine.map((c) => c.rps)), p50: median(mine.map((c) => c.p50)), p99: median(mine.map((c) => c.p99)),
          measurements: mine.length, peakRss: Math.max(0, ...mine.map((c) => c.peakRss ?? 0)) || undefined,
        }];
      }),
    );
    const report: BenchReport = {
      meta: {
        date: new Date().toISOString(),
        mode: opts.mode,
        judged: opts.mode !== 'smoke',
        node: process.version,
        cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
        postgres: `${pgVersion} (${pgSettings})`,
        tokens: opts.tokens,
        callbackAccounts: opts.callbackAccounts,
        rounds: opts.rounds,
        durationSeconds: opts.durationSeconds,
        connections: opts.connections,
        pipelining: opts.pipelining,
        webConcurrency: opts.workers,
        dbPoolSize: opts.pool,
        seedSeconds: fixture.seconds,
        hashedBy: fixture.hashedBy,
        servicePeakRss: peakRssOverall,
        expectedSeconds: expected,
        totalSeconds: (Date.now() - started) / 1000,
        only: opts.only ? [...opts.only] : undefined,
        executor: opts.executor,
        peer: peerMeta,
      },
      references,
      scenarios: summaries,
    };
    const files = writeReport(report, opts.out, path.join(ROOT, 'bench/tuning-log.md'));
    log(`report: ${files.join(', ')} (${report.meta.totalSeconds.toFixed(0)} s in all, ${minutes(expected)} expected)`);
    for (const s of [service, ceiling, floor, listFloor, peer]) await s.stop();
    await otherParts(opts, log);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    cleanupSync();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
    cleanupSync();
    process.exit(1);
  },
);
