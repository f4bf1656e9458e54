// `npm run bench:pglite` (and the end of `npm run bench`, `--only pglite`) — issue 26, without a
// target: ours on the embedded PGlite default against the same peer as the main run (a stock
// oidc-provider, bench/peer.ts), at the requests of scenarios 9 and 10.
//
// The service starts as a user's `npm start` would, in production mode: no DATABASE_URL, so the
// embedded PGlite, in a temporary DATA_DIR (removed at the end), migrated at start; HASH_KEY (required
// in production) and ADMIN_PASSWORD (the first admin, created at the first start) given. Through its own
// REST API, as that admin: a confidential client with the bench client's identifier (its secret is the
// one the service generates), and a hundred tokens of it (POST /api/v2/oauth/tokens). Then, round after
// round, at 10 and at 50 connections: peer-introspect, ours-introspect, peer-cc, ours-cc (A B A B), each
// ratio ours over the peer measured just before it, in the same round and load; medians.
//
//   npm run bench:pglite                full (3 rounds of 6 s; ~3 minutes)
//   npm run bench:pglite -- --quick     3 rounds of 1 s
//   npm run bench:pglite -- --smoke     1 round of 1 s (CI's bench smoke test)
//   options: --out DIR (default bench/results): pglite-peer.json and pglite-peer.md, and its section of latest.md
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchMain, type BenchMode } from './cli';
import type { LoadResult, LoadSpec } from './load';
import { checkPeerTokensActive, issuePeerTokens, PEER_INTROSPECTION_PATH, PEER_TOKEN_PATH, peerConfiguration, peerInfo, startPeer, type PeerInfo } from './peer';
import { runLoader, startServer, type Server } from './processes';
import { PGLITE_END, PGLITE_START } from './report';
import { BENCH_CLIENT, clientCredentialsLoad, introspectionLoad, type Load } from './seed';
import { median } from './stats';

const ROOT = path.resolve(__dirname, '../..');
const ADMIN_EMAIL = 'admin@example.com';
const TOKENS = 100;

interface Options {
  mode: BenchMode;
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number[];
  out: string;
}

/** The rounds in each mode, like the main run's (npm run bench passes its own mode and folder). */
export function pglitePeerOptions(mode: BenchMode, out: string): Options {
  const preset = {
    full: { rounds: 3, durationSeconds: 6, warmupSeconds: 3 },
    quick: { rounds: 3, durationSeconds: 1, warmupSeconds: 1 },
    smoke: { rounds: 1, durationSeconds: 1, warmupSeconds: 0.3 },
  }[mode];
  return { mode, ...preset, connections: [10, 50], out };
}

const KEYS = ['peer-introspect', 'ours-introspect', 'peer-cc', 'ours-cc'] as const;
type Key = (typeof KEYS)[number];

interface Cell {
  key: Key;
  round: number;
  connections: number;
  result: LoadResult;
}

interface PglitePeerLoad {
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  peerRps: number;
  peerP50: number;
  peerP99: number;
  /** median over the rounds of ours / the peer's req/s in the same round and load */
  vsPeer: number;
  non2xx: number;
  errors: number;
}

interface PglitePeerReport {
  meta: {
    date: string; mode: BenchMode; node: string; cpus: string; pglite: string; peer: PeerInfo;
    rounds: number; durationSeconds: number; connections: number[]; totalSeconds: number;
  };
  rows: { scenario: '9' | '10'; name: string; loads: PglitePeerLoad[] }[];
  cells: Cell[];
}

async function json(res: Response, what: string): Promise<Record<string, any>> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, any>;
}

/** As the first admin, through the REST API: the confidential client, and `count` tokens of it (scope read). */
async function clientAndTokens(service: Server, adminPassword: string, count: number): Promise<{ secret: string; tokens: string[] }> {
  const auth = `Basic ${Buffer.from(`${ADMIN_EMAIL}:${adminPassword}`).toString('base64')}`;
  const post = async (p: string, body: unknown) =>
    json(await fetch(`${service.origin}/api/v2${p}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) }), `POST /api/v2${p}`);
  const created = await post('/oauth/clients.json', {
    client: { name: 'Bench client', identifier: BENCH_CLIENT.identifier, kind: 'confidential', redirect_uri: ['https://bench.example.com/cb'], scopes: 'read write' },
  });
  const client = (created.client ?? created) as { id: number; client_secret: string; client_identifier: string };
  if (client.client_identifier !== BENCH_CLIENT.identifier) throw new Error(`the client was created as ${client.client_identifier}`);
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) tokens.push(((await post('/oauth/tokens.json', { token: { client_id: client.id, scopes: ['read'] } })).token as { token: string }).token);
  return { secret: client.client_secret, tokens };
}

/** Ours answers the two requests as the scenarios expect: a token issued, a token of the hundred active. */
async function checkOurs(service: Server, loads: Record<'ours-cc' | 'ours-introspect', Load>): Promise<void> {
  const send = (l: Load, body: string | undefined) => fetch(`${service.origin}${l.path}`, { method: l.method, headers: l.headers, body });
  const issued = await json(await send(loads['ours-cc'], loads['ours-cc'].body), 'our POST /oauth/tokens');
  if (typeof issued.access_token !== 'string' || issued.scope !== 'read') throw new Error(`our client_credentials grant answered ${JSON.stringify(issued)}`);
  const introspect = loads['ours-introspect'];
  for (const v of [introspect.variants![0], introspect.variants![TOKENS - 1]]) {
    const answer = await json(await send(introspect, v.body), 'our POST /oauth/introspect');
    if (answer.active !== true || answer.client_id !== BENCH_CLIENT.identifier) throw new Error(`our introspection answered ${JSON.stringify(answer)}, not active`);
  }
}

const f = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '–');

function table(r: PglitePeerReport): string[] {
  const lines = [
    '| # | request | connections | ours req/s | ours p50 / p99 ms | peer req/s | peer p50 / p99 ms | **× peer** |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of r.rows) {
    for (const l of row.loads) {
      const failed = l.non2xx || l.errors ? ` ⚠ ${l.non2xx} non-2xx, ${l.errors} errors` : '';
      lines.push(`| ${row.scenario} | ${row.name}${failed} | ${l.connections} | ${f(l.rps)} | ${f(l.p50, 2)} / ${f(l.p99, 2)} | ${f(l.peerRps)} | ${f(l.peerP50, 2)} / ${f(l.peerP99, 2)} | **${f(l.vsPeer, 2)}** |`);
    }
  }
  return lines;
}

function markdown(r: PglitePeerReport): string {
  const m = r.meta;
  return [
    `# Ours on the embedded PGlite against the peer (${m.mode}, ${m.date})`,
    '',
    `\`npm run bench:pglite\` (bench/peer-pglite.ts; also the end of \`npm run bench\`). No target (issue 26): the service on its`,
    'default database, the embedded PGlite, in one process, against the same stock oidc-provider as the main run, at the',
    `requests of scenarios 9 and 10. ${m.rounds} round(s) of ${m.durationSeconds} s at ${m.connections.join(' and ')} connections; in each round and at each load the peer`,
    'is measured right before ours (peer-introspect, ours-introspect, peer-cc, ours-cc); each ratio is ours over the peer',
    'measured just before it; every figure is the median over the rounds.',
    '',
    ...table(r),
    '',
    `- **Ours**: \`node dist/src/main.js\`, NODE_ENV=production, LOG_LEVEL=warn, no \`DATABASE_URL\`: the embedded PGlite ${m.pglite} (in the process) in a temporary \`DATA_DIR\`, migrated at start; \`HASH_KEY\` and \`ADMIN_PASSWORD\` given (the first admin). Through the REST API as that admin: a confidential client \`${BENCH_CLIENT.identifier}\` (scopes read write; its secret generated by the service) and ${TOKENS} tokens of it (scope read, \`POST /api/v2/oauth/tokens\`). Scenario 9's request: \`POST /oauth/introspect\` of each of the ${TOKENS} in turn; scenario 10's: \`POST /oauth/tokens\` \`grant_type=client_credentials&scope=read\`; both with the client's Basic header.`,
    `- **Peer**: ${peerConfiguration(m.peer)} The same requests at \`POST /token\` and \`POST /token/introspection\`, with its client's Basic header; peer-introspect over a hundred of its tokens issued right before each of its measurements and each checked \`active: true\` after it (its default adapter forgets the oldest entries past 1,000 to 2,000, and peer-cc creates thousands).`,
    `- Machine: ${m.cpus}; Node ${m.node}; load from autocannon 9 in a separate process (bench/load.ts), pipelining 1; 2 cores shared by the service, the peer and the load generator. ${f(m.totalSeconds)} s in all.`,
    '',
  ].join('\n');
}

/** latest.md's section (between PGLITE_START and PGLITE_END), when latest.md has one. */
function writeLatestSection(r: PglitePeerReport, out: string): boolean {
  const file = path.join(out, 'latest.md');
  if (!existsSync(file)) return false;
  const md = readFileSync(file, 'utf8');
  const start = md.indexOf(PGLITE_START);
  const end = md.indexOf(PGLITE_END);
  if (start < 0 || end < start) return false;
  const section = [
    PGLITE_START,
    `Measured ${r.meta.date.slice(0, 16).replace('T', ' ')} UTC (${r.meta.mode}), ${r.meta.rounds} round(s) of ${r.meta.durationSeconds} s; no target. Ours on the embedded PGlite ${r.meta.pglite} (production mode, one process) against the same peer (oidc-provider ${r.meta.peer.version}); how: [pglite-peer.md](pglite-peer.md).`,
    '',
    ...table(r),
  ].join('\n');
  writeFileSync(file, md.slice(0, start) + section + '\n' + md.slice(end));
  return true;
}

/** Runs the comparison; writes <out>/pglite-peer.{json,md} and the section of <out>/latest.md. */
export async function runPglitePeerBench(opts: Options, log: (line: string) => void = console.log): Promise<PglitePeerReport> {
  const started = Date.now();
  mkdirSync(opts.out, { recursive: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-pglite-'));
  const dataDir = path.join(tmp, 'data');
  const adminPassword = randomBytes(12).toString('hex');
  const servers: Server[] = [];
  try {
    log(`pglite: the service on the embedded PGlite (DATA_DIR ${dataDir}) against the peer, ${opts.rounds} round(s) of ${opts.durationSeconds} s at ${opts.connections.join(' and ')} connections`);
    const [service, peer] = await Promise.all([
      startServer('service (PGlite)', path.join(ROOT, 'dist/src/main.js'), { DATA_DIR: dataDir, HASH_KEY: randomBytes(32).toString('hex'), ADMIN_EMAIL, ADMIN_PASSWORD: adminPassword }),
      startPeer(),
    ]);
    servers.push(service, peer);
    const ours = await clientAndTokens(service, adminPassword, TOKENS);
    const client = { identifier: BENCH_CLIENT.identifier, secret: ours.secret };
    const loads: Record<Key, Load> = {
      'ours-introspect': introspectionLoad(client, ours.tokens),
      'ours-cc': clientCredentialsLoad(client),
      'peer-introspect': { ...introspectionLoad(BENCH_CLIENT, []), path: PEER_INTROSPECTION_PATH },
      'peer-cc': { ...clientCredentialsLoad(BENCH_CLIENT), path: PEER_TOKEN_PATH },
    };
    await checkOurs(service, loads);
    await checkPeerTokensActive(peer, await issuePeerTokens(peer, TOKENS));
    log(`pglite: a confidential client and ${TOKENS} tokens through the API; both servers issue and introspect (active)`);

    const measure = async (key: Key, round: number, connections: number, duration: number): Promise<Cell> => {
      const server = key.startsWith('peer-') ? peer : service;
      let load = loads[key];
      // as in the main run: a hundred live tokens of the peer's, issued right before, checked after
      const peerTokens = key === 'peer-introspect' ? await issuePeerTokens(peer, TOKENS) : undefined;
      if (peerTokens) load = { ...load, variants: introspectionLoad(BENCH_CLIENT, peerTokens).variants };
      const result = await runLoader({ ...load, origin: server.origin, connections, pipelining: 1, durationSeconds: duration } as LoadSpec, tmp);
      if (peerTokens) await checkPeerTokensActive(peer, peerTokens);
      return { key, round, connections, result };
    };
    const busiest = Math.max(...opts.connections);
    for (const key of KEYS) await measure(key, 0, busiest, opts.warmupSeconds);
    const cells: Cell[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      for (const connections of opts.connections) {
        for (const key of KEYS) {
          const cell = await measure(key, round, connections, opts.durationSeconds);
          cells.push(cell);
          const r = cell.result;
          const bad = r.non2xx || r.errors ? ` (${r.non2xx} non-2xx ${JSON.stringify(r.statusCodes)}, ${r.errors} errors)` : '';
          log(`  round ${round} ${String(connections).padStart(3)} conn ${key.padEnd(15)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms${bad}`);
        }
      }
    }

    const row = (scenario: '9' | '10', name: string, mine: Key, theirs: Key) => ({
      scenario, name,
      loads: opts.connections.map((connections): PglitePeerLoad => {
        const at = (key: Key) => cells.filter((c) => c.key === key && c.connections === connections);
        const o = at(mine);
        const p = at(theirs);
        return {
          connections,
          rps: median(o.map((c) => c.result.rps)), p50: median(o.map((c) => c.result.p50)), p99: median(o.map((c) => c.result.p99)),
          peerRps: median(p.map((c) => c.result.rps)), peerP50: median(p.map((c) => c.result.p50)), peerP99: median(p.map((c) => c.result.p99)),
          vsPeer: median(o.map((c) => c.result.rps / (p.find((x) => x.round === c.round)?.result.rps ?? NaN))),
          non2xx: [...o, ...p].reduce((n, c) => n + c.result.non2xx, 0), errors: [...o, ...p].reduce((n, c) => n + c.result.errors, 0),
        };
      }),
    });
    const pglite = (JSON.parse(readFileSync(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string }).version;
    const report: PglitePeerReport = {
      meta: {
        date: new Date().toISOString(), mode: opts.mode, node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
        pglite, peer: peerInfo(), rounds: opts.rounds, durationSeconds: opts.durationSeconds, connections: opts.connections,
        totalSeconds: (Date.now() - started) / 1000,
      },
      rows: [
        row('9', 'introspection of a live token (a hundred in turn)', 'ours-introspect', 'peer-introspect'),
        row('10', 'client_credentials issuance', 'ours-cc', 'peer-cc'),
      ],
      cells,
    };
    writeFileSync(path.join(opts.out, 'pglite-peer.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(opts.out, 'pglite-peer.md'), markdown(report));
    const inLatest = writeLatestSection(report, opts.out);
    log(`pglite report: ${path.join(opts.out, 'pglite-peer.md')}${inLatest ? ' and its section of latest.md' : ''} (${report.meta.totalSeconds.toFixed(0)} s)`);
    return report;
  } finally {
    for (const s of servers) await s.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchMain('pglite', [], (args, log) => runPglitePeerBench(pglitePeerOptions(args.mode, args.out), log));
}
