// Writes the benchmark report: latest.json (everything measured), latest.md
// (the targets at each load, a table per load, the references, the settings, the
// tuning log) and ratios.svg. The targets and their judge are defined here.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadResult } from './load';
import { ratiosChart } from './chart';
import { LIST_FLOOR_SQL } from './references/list-floor-sql';
import { peerConfiguration, type PeerInfo } from './peer';

export interface CellResult extends LoadResult {
  key: string;
  round: number;
  /** the group of scenarios (and references measured before them) within the round */
  group: number;
  /** autocannon connections of this measurement */
  connections: number;
  sqlPerRequest?: number;
  peakRss?: number;
  beside?: { rps: number; p50: number; p99: number; ok: number; non2xx: number; errors: number };
}

export type ReferenceKey = 'ceiling' | 'floor' | 'list-floor' | 'list-floor-deep' | 'peer-cc' | 'peer-introspect';

export interface ReferenceSummary {
  key: ReferenceKey;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  measurements: number;
  peakRss?: number;
}

/** One judged figure at one load. */
export interface Metric {
  label: string;
  value: number;
  bar: number;
  higherIsBetter: boolean;
  met: boolean;
}

/** A scenario's figures at one connection count (medians over the rounds). */
export interface LoadFigures {
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  vsFloor: number;
  vsCeiling: number;
  /** scenarios 4a and 5 against the list floor, 4b against its deep variant (same page) */
  vsListFloor?: number;
  /** scenario 10 against peer-cc, 9 against peer-introspect (the peer, oidc-provider: bench/peer.ts) */
  vsPeer?: number;
  sqlPerRequest: number;
  peakRss?: number;
  non2xx: number;
  errors: number;
  /** scenario 2: req/s over scenario 1's in the same round; scenario 8: over its own load alone just before */
  vsScenario1?: number;
  /** scenario 4b: p50 of the deep page over p50 of the first */
  deepOverFirst?: number;
  basicP50?: number;
  basicRps?: number;
  /** filled by judge() */
  metrics?: Metric[];
  met?: boolean;
}

export interface ScenarioSummary {
  id: string;
  name: string;
  target: string;
  /** one entry per connection count, in the order measured */
  loads: LoadFigures[];
  /** filled by judge(): every target of the scenario holds at every load */
  met?: boolean;
  rounds: CellResult[];
}

export interface BenchReport {
  meta: {
    date: string;
    mode: string;
    judged: boolean;
    node: string;
    cpus: string;
    postgres: string;
    tokens: number;
    callbackAccounts: number;
    rounds: number;
    durationSeconds: number;
    /** each scenario and reference is measured at each of these */
    connections: number[];
    pipelining: number;
    webConcurrency: number;
    dbPoolSize: number;
    seedSeconds: number;
    hashedBy: string;
    servicePeakRss?: number;
    /** printed at start */
    expectedSeconds?: number;
    totalSeconds: number;
    only?: string[];
    /** the service's GraphQL executor (absent in older reports: compiled) */
    executor?: string;
    /** the peer (absent in older reports) */
    peer?: PeerInfo;
  };
  references: ReferenceSummary[];
  scenarios: ScenarioSummary[];
}

// The used_at touch (at most once a minute per token) may add a few statements per
// hundred thousand requests: a statement bound holds within this allowance.
const SQL_ALLOWANCE = 0.005;

const atLeast = (label: string, value: number | undefined, bar: number): Metric => {
  const v = value ?? NaN;
  return { label, value: v, bar, higherIsBetter: true, met: Number.isFinite(v) && v >= bar };
};
const atMost = (label: string, value: number | undefined, bar: number, allowance = 0): Metric => {
  const v = value ?? NaN;
  return { label, value: v, bar, higherIsBetter: false, met: Number.isFinite(v) && v <= bar + allowance };
};

/** The targets of issues "Performance II" and "Performance III" (26: 7, 10 and 11 raised, 9 and 10 against the peer): what each scenario is judged on, at every load. */
export const TARGETS: Record<string, { text: string; metrics: (l: LoadFigures) => Metric[] }> = {
  '1': { text: '≥ 0.85 × floor', metrics: (l) => [atLeast('× floor', l.vsFloor, 0.85)] },
  '2': { text: '≥ 0.95 × scenario 1', metrics: (l) => [atLeast('× scenario 1', l.vsScenario1, 0.95)] },
  '3': { text: '≥ 0.45 × floor', metrics: (l) => [atLeast('× floor', l.vsFloor, 0.45)] },
  '4a': { text: '≥ 0.60 × list floor', metrics: (l) => [atLeast('× list floor', l.vsListFloor, 0.6)] },
  '4b': { text: 'p50 deep / first ≤ 1.25', metrics: (l) => [atMost('deep p50 / first p50', l.deepOverFirst, 1.25)] },
  '5': {
    text: '≥ 0.50 × list floor; ≤ 4 SQL/request',
    metrics: (l) => [atLeast('× list floor', l.vsListFloor, 0.5), atMost('SQL/request', l.sqlPerRequest, 4, SQL_ALLOWANCE)],
  },
  '6': { text: '≥ 0.30 × floor', metrics: (l) => [atLeast('× floor', l.vsFloor, 0.3)] },
  '7': { text: '≥ 0.40 × floor', metrics: (l) => [atLeast('× floor', l.vsFloor, 0.4)] },
  '8': { text: 'scenario 1 keeps ≥ 85 %; report Basic p50', metrics: (l) => [atLeast('× scenario 1 alone', l.vsScenario1, 0.85)] },
  '9': { text: '≥ 0.60 × floor; ≥ 1.0 × peer', metrics: (l) => [atLeast('× floor', l.vsFloor, 0.6), atLeast('× peer', l.vsPeer, 1)] },
  '10': { text: '≥ 0.60 × floor; ≥ 1.0 × peer', metrics: (l) => [atLeast('× floor', l.vsFloor, 0.6), atLeast('× peer', l.vsPeer, 1)] },
  '11': { text: '≥ 0.45 × floor', metrics: (l) => [atLeast('× floor', l.vsFloor, 0.45)] },
};

/** The figures each target is about, their bars, and whether they hold: at each load, and at all of them. */
export function judge(s: ScenarioSummary): void {
  const target = TARGETS[s.id];
  if (!target) return;
  for (const l of s.loads) {
    l.metrics = target.metrics(l);
    // a measurement with failed requests proves nothing
    l.met = l.metrics.every((m) => m.met) && l.non2xx === 0 && l.errors === 0;
  }
  s.met = s.loads.length > 0 && s.loads.every((l) => l.met);
}

const f = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const mb = (bytes: number | undefined) => (bytes ? `${(bytes / 2 ** 20).toFixed(0)} MB` : '–');

const REFERENCES: Record<ReferenceKey, string> = {
  ceiling: 'ceiling: bare Fastify 5 route, constant JSON',
  floor: 'floor: Fastify 5 + HMAC of the Bearer token + one raw `pg` query',
  'list-floor': 'list floor: Fastify 5 + HMAC + one raw `pg` query for 100 rows + JSON, first page (4a, 5)',
  'list-floor-deep': 'list floor, deep: the same at 4b\'s page (after 95 % of the tokens)',
  'peer-cc': 'peer: oidc-provider, `POST /token` client_credentials (scenario 10\'s request)',
  'peer-introspect': 'peer: oidc-provider, `POST /token/introspection` of a hundred live tokens (scenario 9\'s request)',
};

/** latest.md's section of bench/peer-pglite.ts, which writes its figures between these two lines */
export const PGLITE_START = '<!-- pglite-peer:start -->';
export const PGLITE_END = '<!-- pglite-peer:end -->';

const figure = (m: Metric) => `${f(m.value, 2)} ${m.label}`;

export function markdown(report: BenchReport, tuningLog: string | undefined): string {
  const m = report.meta;
  const loads = m.connections;
  const mark = (met: boolean | undefined) => (!m.judged || met === undefined ? '' : met ? '✅' : '❌');
  const atLoads = loads.length > 1 ? `at ${loads.slice(0, -1).join(', ')} and at ${loads[loads.length - 1]} connections` : `at ${loads[0]} connections`;
  const lines: string[] = [];
  lines.push(`# Benchmark report (${m.mode})`, '');
  lines.push(`Generated by \`npm run bench${m.mode === 'full' ? '' : ` -- --${m.mode}`}\` on ${m.date}. ${m.judged ? '' : '**Smoke mode: tiny data, one short round; nothing is judged.**'}${m.executor === 'interpreter' ? ' **GraphQL executor: the interpreter (`--executor interpreter`), the baseline of the compiled one.**' : ''}`, '');
  lines.push('![ratios](ratios.svg)', '');

  lines.push('## Targets', '');
  lines.push(
    `Every scenario and reference is measured ${atLoads}; each ratio is taken against the references measured at the same connection count, in the same round and group, and every figure is the median over the rounds. A target is met only if it holds at each load (a target of two conditions, both of them).`,
    '',
  );
  lines.push(`| # | scenario | target | ${loads.map((c) => `${c} connections`).join(' | ')} | met? |`);
  lines.push(`|---|---|---|${loads.map(() => '---:|').join('')}:---:|`);
  for (const s of report.scenarios) {
    const cells = loads.map((c) => {
      const l = s.loads.find((x) => x.connections === c);
      if (!l?.metrics) return '–';
      const failed = l.non2xx || l.errors ? ' ⚠ failed requests' : '';
      return `${l.metrics.map(figure).join(', ')}${failed} ${mark(l.met)}`.trim();
    });
    lines.push(`| ${s.id} | ${s.name} | ${s.target} | ${cells.join(' | ')} | ${mark(s.met)} |`);
  }

  for (const c of loads) {
    lines.push('', `## Measurements at ${c} connections`, '');
    lines.push('| # | scenario | req/s | p50 ms | p99 ms | × floor | × list floor | × peer | × ceiling | SQL/req | peak RSS |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const s of report.scenarios) {
      const l = s.loads.find((x) => x.connections === c);
      if (!l) continue;
      const failed = l.non2xx || l.errors ? ` ⚠ ${l.non2xx} non-2xx, ${l.errors} errors` : '';
      lines.push(`| ${s.id} | ${s.name}${failed} | ${f(l.rps)} | ${f(l.p50, 2)} | ${f(l.p99, 2)} | ${f(l.vsFloor, 2)} | ${f(l.vsListFloor, 2)} | ${f(l.vsPeer, 2)} | ${f(l.vsCeiling, 2)} | ${f(l.sqlPerRequest, 2)} | ${mb(l.peakRss)} |`);
    }
    const s8 = report.scenarios.find((s) => s.id === '8')?.loads.find((x) => x.connections === c);
    if (s8) {
      lines.push('', `Scenario 8: Basic-auth requests at ${f(s8.basicRps, 0)} req/s had p50 **${f(s8.basicP50, 2)} ms**; scenario 1 beside them kept ${f((s8.vsScenario1 ?? NaN) * 100, 0)}% of the req/s it had alone, measured just before in the same round (SQL/req counts both loads).`);
    }
  }

  lines.push('', '## References (same run, alternating with the scenarios)', '');
  lines.push('| reference | connections | req/s | p50 ms | p99 ms | measurements |', '|---|---:|---:|---:|---:|---:|');
  for (const key of Object.keys(REFERENCES) as ReferenceKey[]) {
    for (const r of report.references.filter((x) => x.key === key)) {
      lines.push(`| ${REFERENCES[key]} | ${r.connections} | ${f(r.rps)} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | ${r.measurements} |`);
    }
  }
  lines.push(
    '',
    `- **ceiling**: a bare Fastify 5 route returning a constant JSON — what the HTTP stack costs. \`bench/references/ceiling.ts\`.`,
    `- **floor**: a Fastify 5 route that hashes the Bearer token like the service (HMAC-SHA-256 under HASH_KEY) and reads that token's row with one raw \`pg\` query on a pool of the service's size (${m.dbPoolSize}) — the least an authenticated read can do; scenarios 1, 3, 6, 7, 9, 10 and 11 are judged against it. \`bench/references/floor.ts\`.`,
    `- **list floor**: the yardstick of the list scenarios 4a, 4b and 5, which return 100 rows where the floor returns one — what a minimal hand-written service would do for that page. Fastify 5 at scenario 4a's path and query (\`/api/v2/oauth/tokens.json\`, \`page[size]=100\`; \`page[after]\` is the service's signed cursor, checked the same way), the Bearer hashed like the floor, then **one** raw \`pg\` statement (unnamed, like the floor's) that authenticates and reads the page: the presented token by its hash (not revoked, as in the floor) gives the account; that account's live tokens in id order after the cursor, keyset, LIMIT 101 (index \`(account_id, id)\`); each row's client name and user email by primary key. Each row becomes a Zendesk-like token object (id, token prefix, client and user ids, scopes, ISO dates, refresh token prefix, url, client name, user email), and \`JSON.stringify\` writes the page in the service's envelope (\`tokens\`, \`meta\`, \`links\`). The harness checks at start that it returns the same tokens as the service. It is measured before every group that holds a list scenario, in every round and at every load: at scenario 4a's request (scenarios 4a and 5 are compared with it) and, as **list floor, deep**, at scenario 4b's (the page after 95 % of the tokens; scenario 4b is compared with it). \`bench/references/list-floor.ts\`; its statement:`,
    '',
    '```sql',
    LIST_FLOOR_SQL,
    '```',
  );
  if (m.peer) {
    lines.push(
      '',
      `- **peer** (issue 26): ${peerConfiguration(m.peer)} Scenario 10 is compared with **peer-cc**, the same request (same Basic header, same form body) at the peer's \`POST /token\`; scenario 9 with **peer-introspect**, scenario 9's request at \`POST /token/introspection\` over a hundred of the peer's live tokens. The peer's default adapter forgets the oldest entries once it holds 1,000 to 2,000, and peer-cc creates thousands: so the hundred tokens are issued right before each peer-introspect measurement, and each is checked \`active: true\` after it (the run stops otherwise; at start, the harness checks that the peer's tokens are opaque and introspect as active). Each is measured before the group that holds its scenario, in every round and at every load, like the floors; the peer keeps its tokens in its process's memory, ours are rows of PostgreSQL valid in every process. \`bench/peer.ts\`.`,
    );
  }

  lines.push(
    '', '## Ours on the embedded PGlite against the peer (no target)', '',
    PGLITE_START,
    '[pglite-peer.md](pglite-peer.md): ours on the service\'s embedded PGlite default (production mode, one process) against the same peer, at the requests of scenarios 9 and 10; `npm run bench` runs it after the scenarios (`npm run bench -- --only pglite` alone) and writes its figures here.',
    PGLITE_END,
  );

  lines.push('', '## How it was measured', '');
  lines.push(
    `- Machine: ${m.cpus}; Node ${m.node}; PostgreSQL ${m.postgres}.`,
    `- Service: \`node dist/src/main.js\`, NODE_ENV=production, LOG_LEVEL=warn, BENCH_MODE=true, WEB_CONCURRENCY=${m.webConcurrency}, DB_POOL_SIZE=${m.dbPoolSize}, OAUTH_CLIENT_LIVE_TOKENS=100000000 (scenario 10 passes the default 100,000 live tokens of its client within a run); the references run with the same Node, NODE_ENV and log level, the floors with the same pool size.`,
    `- Load: autocannon 9 in a separate process, **${loads.join(' and ')} connections (each measurement at each), pipelining ${m.pipelining}, ${m.durationSeconds} s per measurement**; scenario 8 adds a second autocannon process at a fixed rate (one connection per request per second, at most 50, so that requests waiting for a KDF do not hold the rate down) with Basic credentials of users not seen before in the run (a fresh set per measurement), so each measurement pays one password KDF per user, then the service's 60 s cache of successful verifications (src/domain/auth/authenticator.ts).`,
    `- ${m.rounds} round(s); in each round, for each group of three scenarios and at each connection count in turn, the floor and the ceiling (and the list floors, for a group with a list scenario; the peer, for a group with scenario 9 or 10) are measured right before the group's scenarios (A B A B …), and each ratio is taken against the references measured just before it, in the same round, group and load. Every figure is the median over the rounds. A warm-up run of every target (at ${Math.max(...loads)} connections) precedes the rounds.`,
    `- Data: ${f(m.tokens)} tokens in the bench account (hashes by ${m.hashedBy}), seeded in ${f(m.seedSeconds, 1)} s; ${f(m.callbackAccounts)} further accounts (agent, token, phone number) across which scenario 7 cycles, one request per account per cycle, to stay under the 30 per 10 minutes limit.`,
    `- SQL/request: the service's statement counter (GET /__bench/stats, bench mode only) before and after each measurement (after waiting for the requests still in flight), divided by the requests the service received in between (its own counter). Peak RSS: the service process's VmRSS sampled every 200 ms (${mb(m.servicePeakRss)} high-water mark over the whole run).`,
    `- Total time of this run: ${f(m.totalSeconds)} s${m.expectedSeconds ? ` (${f(m.expectedSeconds)} s expected at start)` : ''}.`,
  );
  if (m.only) lines.push(`- Only scenarios ${m.only.join(', ')}.`);
  if (tuningLog) lines.push('', tuningLog.trim());
  return `${lines.join('\n')}\n`;
}

export function writeReport(report: BenchReport, outDir: string, tuningLogFile?: string): string[] {
  for (const s of report.scenarios) judge(s);
  const tuningLog = tuningLogFile && existsSync(tuningLogFile) ? readFileSync(tuningLogFile, 'utf8') : undefined;
  const files = [path.join(outDir, 'latest.json'), path.join(outDir, 'latest.md'), path.join(outDir, 'ratios.svg')];
  writeFileSync(files[0], `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(files[1], markdown(report, tuningLog));
  writeFileSync(files[2], ratiosChart(report));
  return files;
}
