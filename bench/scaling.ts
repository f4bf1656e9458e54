// `npm run bench:scaling` (and the end of `npm run bench`) — the service behind a transaction
// pooler and over several web processes (docs/scaling.md), on PostgreSQL, against the service
// as built production processes, each WEB_CONCURRENCY=1, WORKER=false (web-only), the same
// DB_POOL_SIZE; a pgbouncer of its own (pool_mode=transaction) in front of the database:
//
//   rows, each an A/B pair measured in turn round after round (A B, then B A, …), each ratio
//   taken within a round and load, the median over the rounds:
//   1. bearer:    scenario 1 of bench/run.ts (GET /api/v2/oauth/tokens/current.json, a hundred
//                 seeded tokens) through pgbouncer (DATABASE_URL=…?pgbouncer=true) over the same on
//                 a direct connection, at 10 and 50 connections. Target ≥ 0.90.
//   2. create:    scenario 6 (POST /api/v2/oauth/tokens.json, the admin's Bearer), the same way. Target ≥ 0.90.
//   3. processes: scenario 1 on two web processes over one, both through pgbouncer, 50 connections
//                 from two load processes of 25 each (to the one process, or one to each). No target:
//                 on a 2-core machine the figure says what the cores have left, not how it scales.
//   4. bearer-unnamed, create-unnamed: the same loads on the primary itself with ?pgbouncer=true
//                 (unnamed statements, no pooler) over direct, at 50 connections: which part of the
//                 pooled rows' cost is the statements a transaction pooler needs, which the hop.
//   and, in each measurement, the CPU time of the web process(es), of PostgreSQL (the postmaster
//   and its children, from /proc) and of pgbouncer: CPU per request, hence how many requests/s a
//   core of each carries, and how many web processes one PostgreSQL core feeds.
//
//   npm run bench:scaling                full (100,000 tokens, 3 rounds of 6 s; ~5 min)
//   npm run bench:scaling -- --quick     3 rounds of 1 s
//   npm run bench:scaling -- --smoke     tiny, judges nothing (CI's bench smoke test)
//   options: --out DIR (default bench/results): scaling.json and scaling.md; --only bearer,create,processes,bearer-unnamed,create-unnamed
// BENCH_DATABASE_URL: a server to make a database of its own on (else a throwaway PostgreSQL).
// Needs pgbouncer (apt-get install pgbouncer).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb } from '../src/db/create-db';
import { migrate } from '../src/db/migrate';
import type { LoadResult } from './load';
import { freePort } from './net';
import { pgbouncerBinary, startPgbouncer, type Pgbouncer } from './pgbouncer';
import { children, runLoader, startServer, throwawayPostgres, type Server } from './processes';
import { benchMain, type BenchMode } from './cli';
import { bearerLoad, seed, tokenCreationLoad, type Load } from './seed';
import { median } from './stats';

const ROOT = path.resolve(__dirname, '../..');

const ROWS = ['bearer', 'create', 'processes', 'bearer-unnamed', 'create-unnamed'] as const;
type Row = (typeof ROWS)[number];
type Variant = 'direct' | 'pooled' | 'unnamed' | 'one' | 'two';

/**
 * What each row compares: its load, the baseline (A), the candidate (B), at which loads, and
 * the bar of B / A. The *-unnamed rows say where the pooled rows' cost comes from: the
 * statements a transaction pooler needs (unnamed, parsed and planned at every run) without the
 * pooler (DATABASE_URL = the primary itself with ?pgbouncer=true).
 */
const ROW_DEFS: Record<Row, { name: string; load: 'bearer' | 'create'; a: Variant; b: Variant; allLoads: boolean; min?: number; target: string }> = {
  bearer: { name: 'Bearer: GET /api/v2/oauth/tokens/current.json (scenario 1)', load: 'bearer', a: 'direct', b: 'pooled', allLoads: true, min: 0.9, target: 'pooled ≥ 0.90 × direct' },
  create: { name: 'token creation: POST /api/v2/oauth/tokens.json (scenario 6)', load: 'create', a: 'direct', b: 'pooled', allLoads: true, min: 0.9, target: 'pooled ≥ 0.90 × direct' },
  processes: { name: 'Bearer on two web processes over one (both through pgbouncer)', load: 'bearer', a: 'one', b: 'two', allLoads: false, target: 'none: reported (2 cores)' },
  'bearer-unnamed': { name: 'Bearer, unnamed statements on a direct connection (no pooler)', load: 'bearer', a: 'direct', b: 'unnamed', allLoads: false, target: 'none: where the pooled cost comes from' },
  'create-unnamed': { name: 'token creation, unnamed statements on a direct connection (no pooler)', load: 'create', a: 'direct', b: 'unnamed', allLoads: false, target: 'none: where the pooled cost comes from' },
};

interface Options {
  mode: BenchMode;
  tokens: number;
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** the loads of the pooled-vs-direct rows */
  connections: number[];
  /** the load of the other rows (the processes row: from two load processes of half each) */
  busiest: number;
  /** DB_POOL_SIZE of every service process */
  pool: number;
  /** pgbouncer's default_pool_size: server connections for the database (≥ the processes' pools together) */
  bouncerPool: number;
  maxClientConn: number;
  rows: Set<Row>;
  out: string;
}

/** The measurements' sizes in each mode (npm run bench passes its own mode and folder). */
export function scalingOptions(mode: BenchMode, out: string): Options {
  const preset = {
    full: { tokens: 100_000, rounds: 3, durationSeconds: 6, warmupSeconds: 3 },
    quick: { tokens: 100_000, rounds: 3, durationSeconds: 1, warmupSeconds: 1 },
    smoke: { tokens: 200, rounds: 1, durationSeconds: 1, warmupSeconds: 0.3 },
  }[mode];
  return { mode, ...preset, connections: [10, 50], busiest: 50, pool: 10, bouncerPool: 20, maxClientConn: 1000, rows: new Set(ROWS), out };
}

// ---------------------------------------------------------------- CPU time, from /proc

/** clock ticks per second of /proc's times (USER_HZ) */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  ppid: number;
  /** user + system ticks of the process itself */
  own: number;
  /** user + system ticks of its children it has waited for */
  reaped: number;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after "(comm)": state ppid … utime(14) stime(15) cutime(16) cstime(17)
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined;
  }
}

/** CPU seconds of one process (undefined once it is gone). */
const cpuOf = (pid: number | undefined) => {
  const s = pid ? procStat(pid) : undefined;
  return s && s.own / TICKS;
};

/**
 * CPU seconds of a PostgreSQL server: the postmaster, the children it has reaped (backends
 * that ended), and its live children (backends, autovacuum, checkpointer, WAL writer…).
 */
function serverCpu(postmaster: number): number | undefined {
  const root = procStat(postmaster);
  if (!root) return undefined;
  let ticks = root.own + root.reaped;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = procStat(Number(name));
    if (s?.ppid === postmaster) ticks += s.own;
  }
  return ticks / TICKS;
}

/** Busy CPU seconds of the whole machine (every core; /proc/stat): ours, the load generator's, anyone's. */
function machineCpu(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal …: everything but idle and iowait is busy
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) / TICKS;
}

/**
 * The postmaster of the server behind `url`, when it runs on this machine (its backend's
 * parent, from /proc): its CPU can be measured; else undefined, and the report says so.
 */
async function postmasterOf(url: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const pid = Number((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    const backend = procStat(pid);
    if (!backend) return undefined;
    const comm = readFileSync(`/proc/${backend.ppid}/comm`, 'utf8').trim();
    return comm.startsWith('postgres') ? backend.ppid : undefined;
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------- measurements

/** CPU seconds used during one measurement. */
interface CpuUse {
  /** the web process(es) the load went to */
  web: number;
  postgres?: number;
  pgbouncer?: number;
  /** the whole machine (load generator and anything else included) */
  machine: number;
}

interface Measurement extends LoadResult {
  row: Row;
  variant: Variant;
  round: number;
  connections: number;
  /** seconds from before the load processes started to after they ended (the CPU window) */
  wallSeconds: number;
  cpu: CpuUse;
}

/** Where a measurement's load goes: each of `loaders` load processes, with its share of the connections, to `servers[i % n]`. */
interface Target {
  servers: Server[];
  loaders: number;
}

interface Probe {
  postmaster?: number;
  bouncer: Pgbouncer;
}

function sample(servers: Server[], probe: Probe) {
  const web = servers.map((s) => cpuOf(s.child.pid) ?? NaN).reduce((a, b) => a + b, 0);
  return {
    web,
    postgres: probe.postmaster ? serverCpu(probe.postmaster) : undefined,
    pgbouncer: cpuOf(probe.bouncer.child.pid),
    machine: machineCpu(),
    at: performance.now(),
  };
}

/** Several load processes' results as one: counts added, p50 weighted by responses, the worst p99. */
function combine(results: LoadResult[]): LoadResult {
  if (results.length === 1) return results[0];
  const sum = (f: (r: LoadResult) => number) => results.reduce((n, r) => n + f(r), 0);
  const statusCodes: Record<string, number> = {};
  for (const r of results) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const ok = sum((r) => r.ok);
  return {
    ok, responses: sum((r) => r.responses), non2xx: sum((r) => r.non2xx), errors: sum((r) => r.errors), timeouts: sum((r) => r.timeouts), statusCodes,
    durationSeconds: Math.max(...results.map((r) => r.durationSeconds)),
    rps: sum((r) => r.rps),
    p50: ok ? sum((r) => r.p50 * r.ok) / ok : 0,
    p99: Math.max(...results.map((r) => r.p99)),
    mean: ok ? sum((r) => r.mean * r.ok) / ok : 0,
  };
}

async function measureOnce(target: Target, load: Load, connections: number, seconds: number, probe: Probe, tmp: string) {
  const before = sample(target.servers, probe);
  const results = await Promise.all(
    Array.from({ length: target.loaders }, (_, i) =>
      runLoader({ ...load, origin: target.servers[i % target.servers.length].origin, connections: Math.max(1, Math.round(connections / target.loaders)), pipelining: 1, durationSeconds: seconds }, tmp)),
  );
  const after = sample(target.servers, probe);
  const delta = (f: (s: typeof before) => number | undefined) => {
    const a = f(after);
    const b = f(before);
    return a === undefined || b === undefined ? undefined : a - b;
  };
  return {
    ...combine(results),
    wallSeconds: (after.at - before.at) / 1000,
    cpu: { web: delta((s) => s.web) ?? NaN, postgres: delta((s) => s.postgres), pgbouncer: delta((s) => s.pgbouncer), machine: delta((s) => s.machine) ?? NaN },
  };
}

// ---------------------------------------------------------------- summaries

interface VariantFigures {
  variant: Variant;
  rps: number;
  p50: number;
  p99: number;
  /** CPU milliseconds per response (medians over the rounds) */
  cpuMs: { web: number; postgres?: number; pgbouncer?: number };
  /** cores busy during the measurement (CPU seconds per second; medians) */
  cores: { web: number; postgres?: number; pgbouncer?: number; machine: number };
  non2xx: number;
  errors: number;
}

interface RowLoad {
  connections: number;
  a: VariantFigures;
  b: VariantFigures;
  /** median over the rounds of B / A of the same round */
  ratio: number;
  ratios: number[];
  /** the target holds (rows with one), and no request failed */
  met?: boolean;
}

interface RowSummary {
  row: Row;
  name: string;
  a: Variant;
  b: Variant;
  target: string;
  min?: number;
  loads: RowLoad[];
}

interface Capacity {
  request: string;
  via: string;
  connections: number;
  webMs: number;
  postgresMs?: number;
  pgbouncerMs?: number;
  /** requests per second one core of each carries */
  perWebCore: number;
  perPostgresCore?: number;
  perPgbouncer?: number;
  /** web processes (one core each, busy) one PostgreSQL core keeps up with */
  webProcessesPerPostgresCore?: number;
}

export interface ScalingReport {
  meta: {
    date: string; mode: BenchMode; judged: boolean; node: string; cpus: string; postgres: string; pgbouncer: string; totalSeconds: number;
    tokens: number; rounds: number; durationSeconds: number; warmupSeconds: number; dbPoolSize: number; webConcurrency: 1; worker: false;
    pgbouncerSettings: Record<string, string>;
    /** why PostgreSQL's CPU was not measured (a server not on this machine), else absent */
    postgresCpuMissing?: string;
    rows: Row[];
  };
  rows: RowSummary[];
  capacity: Capacity[];
  measurements: Measurement[];
}

const perRequestMs = (cpu: number | undefined, m: Measurement) => (cpu === undefined || !m.responses ? undefined : (cpu * 1000) / m.responses);
const medianOf = (xs: (number | undefined)[]) => (xs.some((x) => x === undefined) ? undefined : median(xs as number[]));

function figures(mine: Measurement[], variant: Variant): VariantFigures {
  return {
    variant,
    rps: median(mine.map((m) => m.rps)),
    p50: median(mine.map((m) => m.p50)),
    p99: median(mine.map((m) => m.p99)),
    cpuMs: {
      web: median(mine.map((m) => perRequestMs(m.cpu.web, m) ?? NaN)),
      postgres: medianOf(mine.map((m) => perRequestMs(m.cpu.postgres, m))),
      pgbouncer: medianOf(mine.map((m) => perRequestMs(m.cpu.pgbouncer, m))),
    },
    cores: {
      web: median(mine.map((m) => m.cpu.web / m.wallSeconds)),
      postgres: medianOf(mine.map((m) => (m.cpu.postgres === undefined ? undefined : m.cpu.postgres / m.wallSeconds))),
      pgbouncer: medianOf(mine.map((m) => (m.cpu.pgbouncer === undefined ? undefined : m.cpu.pgbouncer / m.wallSeconds))),
      machine: median(mine.map((m) => m.cpu.machine / m.wallSeconds)),
    },
    non2xx: mine.reduce((n, m) => n + m.non2xx, 0),
    errors: mine.reduce((n, m) => n + m.errors, 0),
  };
}

function summarise(row: Row, connections: number[], measurements: Measurement[], judged: boolean): RowSummary {
  const def = ROW_DEFS[row];
  const loads = connections.map((c): RowLoad => {
    const of = (variant: Variant) => measurements.filter((m) => m.row === row && m.connections === c && m.variant === variant);
    const a = of(def.a);
    const b = of(def.b);
    const ratios = b.map((m) => m.rps / (a.find((x) => x.round === m.round)?.rps ?? NaN));
    const l: RowLoad = { connections: c, a: figures(a, def.a), b: figures(b, def.b), ratio: median(ratios), ratios };
    if (judged && def.min !== undefined) l.met = l.ratio >= def.min && !l.a.non2xx && !l.b.non2xx && !l.a.errors && !l.b.errors;
    return l;
  });
  return { row, name: def.name, a: def.a, b: def.b, target: def.target, min: def.min, loads };
}

function capacityOf(rows: RowSummary[]): Capacity[] {
  const out: Capacity[] = [];
  for (const s of rows.filter((r) => r.row === 'bearer' || r.row === 'create')) {
    // at the busiest load: the service saturated, as a capacity is
    const l = s.loads[s.loads.length - 1];
    for (const v of [l.b, l.a]) {
      const { web, postgres, pgbouncer } = v.cpuMs;
      out.push({
        request: s.row === 'bearer' ? 'Bearer read (current.json)' : 'token creation (POST tokens.json)',
        via: v.variant === 'pooled' ? 'pgbouncer' : 'direct',
        connections: l.connections,
        webMs: web, postgresMs: postgres, pgbouncerMs: v.variant === 'pooled' ? pgbouncer : undefined,
        perWebCore: 1000 / web,
        perPostgresCore: postgres && 1000 / postgres,
        perPgbouncer: v.variant === 'pooled' && pgbouncer ? 1000 / pgbouncer : undefined,
        webProcessesPerPostgresCore: postgres && web / postgres,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------- report

const f = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }));

function markdown(r: ScalingReport): string {
  const m = r.meta;
  const verdict = (l: RowLoad) => (l.met === undefined ? (m.judged ? '—' : 'not judged (smoke)') : l.met ? '**met**' : '**missed**');
  const lines: string[] = [];
  lines.push(`# Scaling benchmark (${m.mode}, ${m.date})`, '');
  lines.push(
    `Node ${m.node}, ${m.cpus}, PostgreSQL ${m.postgres}, ${m.pgbouncer}; ${f(m.totalSeconds)} s. \`npm run bench:scaling\` (bench/scaling.ts).`,
    `**Machine caveat:** the web processes, PostgreSQL, pgbouncer, the load generator and the benchmark share these cores (and other work may run beside them: the machine's busy cores are in the CPU table); ratios compare measurements seconds apart in the same round.`,
    '',
  );
  lines.push('## Ratios', '');
  lines.push(
    `Each row measures its two variants in turn (A B in one round, B A in the next), ${m.rounds} round(s) of ${m.durationSeconds} s after a warm-up of each; each ratio is B / A within a round and load, and the figure is the median over the rounds (req/s and latencies too).`,
    '',
  );
  lines.push('| row | connections | A | A req/s | A p50 / p99 ms | B | B req/s | B p50 / p99 ms | B / A (median) | rounds | target | |');
  lines.push('|---|---:|---|---:|---:|---|---:|---:|---:|---|---|---|');
  for (const s of r.rows) {
    for (const l of s.loads) {
      const failed = l.a.non2xx + l.b.non2xx + l.a.errors + l.b.errors ? ` ⚠ ${l.a.non2xx + l.b.non2xx} non-2xx, ${l.a.errors + l.b.errors} errors` : '';
      lines.push(
        `| ${s.name}${failed} | ${l.connections} | ${s.a} | ${f(l.a.rps)} | ${f(l.a.p50, 2)} / ${f(l.a.p99, 2)} | ${s.b} | ${f(l.b.rps)} | ${f(l.b.p50, 2)} / ${f(l.b.p99, 2)} | **${f(l.ratio, 2)}** | ${l.ratios.map((x) => f(x, 2)).join(', ')} | ${s.target} | ${verdict(l)} |`,
      );
    }
  }

  lines.push('', '## CPU per request', '');
  lines.push(
    `CPU time (user + system, from /proc) of each part during each measurement, divided by the responses of that measurement; medians over the rounds. "cores busy" is CPU seconds per second of the measurement (the machine: every core, load generator and anything else running included).${m.postgresCpuMissing ? ` PostgreSQL: not measured (${m.postgresCpuMissing}).` : ' PostgreSQL: the postmaster and every process under it (backends, autovacuum, checkpointer, WAL writer).'}`,
    '',
  );
  lines.push('| row | connections | variant | web ms/req | PostgreSQL ms/req | pgbouncer ms/req | cores busy: web | PostgreSQL | pgbouncer | machine |');
  lines.push('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of r.rows) {
    for (const l of s.loads) {
      for (const v of [l.a, l.b]) {
        lines.push(`| ${s.row} | ${l.connections} | ${v.variant} | ${f(v.cpuMs.web, 3)} | ${f(v.cpuMs.postgres, 3)} | ${f(v.cpuMs.pgbouncer, 3)} | ${f(v.cores.web, 2)} | ${f(v.cores.postgres, 2)} | ${f(v.cores.pgbouncer, 2)} | ${f(v.cores.machine, 2)} |`);
      }
    }
  }

  if (r.capacity.length) {
    lines.push('', '## Capacity (derived, for docs/scaling.md)', '');
    lines.push(
      `From the CPU per request at the busiest load (${r.capacity[0].connections} connections): requests per second one core of each part carries = 1000 / (its ms per request); web processes one PostgreSQL core feeds = web ms / PostgreSQL ms (a web process with WEB_CONCURRENCY=1 runs its JavaScript on one thread: about one core).`,
      '',
    );
    lines.push('| request | via | web ms/req | PostgreSQL ms/req | pgbouncer ms/req | req/s per web core | req/s per PostgreSQL core | req/s per pgbouncer (one thread) | web processes per PostgreSQL core |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const c of r.capacity) {
      lines.push(`| ${c.request} | ${c.via} | ${f(c.webMs, 3)} | ${f(c.postgresMs, 3)} | ${f(c.pgbouncerMs, 3)} | ${f(c.perWebCore)} | ${f(c.perPostgresCore)} | ${f(c.perPgbouncer)} | ${f(c.webProcessesPerPostgresCore, 1)} |`);
    }
    lines.push(
      '',
      'These are costs on this machine under full load, on loopback: a real network adds per-request system time on every side; a PostgreSQL core also serves autovacuum and the checkpointer (counted here), and a larger table or a colder cache costs it more. Read the figures as orders of magnitude for sizing, with headroom.',
    );
  }

  const busiest = (row: Row) => r.rows.find((s) => s.row === row)?.loads.at(-1);
  const costs = (['bearer', 'create'] as const).flatMap((load) => {
    const pooled = busiest(load);
    const unnamed = busiest(`${load}-unnamed`);
    return pooled && unnamed ? [{ load, pooled, unnamed }] : [];
  });
  if (costs.length) {
    lines.push('', '## Where the pooled cost goes', '');
    lines.push(
      'Through a transaction pooler the service sends its statements unnamed (`?pgbouncer=true`: a named statement prepared on one server connection is unknown on the next one pgbouncer 1.18 hands out), so PostgreSQL parses and plans each statement at every run, where a named one is parsed once per connection and its plan reused. The *-unnamed rows send the same unnamed statements to the primary itself, without pgbouncer:',
      '',
      '| request | connections | PostgreSQL ms/req: named, direct | unnamed, direct | unnamed, through pgbouncer | pgbouncer ms/req | web ms/req: named / unnamed / pooled | req/s: unnamed / named | pooled / named |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const { load, pooled, unnamed } of costs) {
      lines.push(
        `| ${load === 'bearer' ? 'Bearer' : 'token creation'} | ${pooled.connections} | ${f(pooled.a.cpuMs.postgres, 3)} | ${f(unnamed.b.cpuMs.postgres, 3)} | ${f(pooled.b.cpuMs.postgres, 3)} | ${f(pooled.b.cpuMs.pgbouncer, 3)} | ${f(pooled.a.cpuMs.web, 3)} / ${f(unnamed.b.cpuMs.web, 3)} / ${f(pooled.b.cpuMs.web, 3)} | ${f(unnamed.ratio, 2)} | ${f(pooled.ratio, 2)} |`,
      );
    }
    const times = (x: number | undefined, y: number | undefined) => (x === undefined || y === undefined ? '–' : `${f(x / y, 1)} ×`);
    lines.push(
      '',
      ...costs.map(({ load, pooled, unnamed }) =>
        `- ${load === 'bearer' ? 'Bearer' : 'token creation'}: PostgreSQL spent ${times(unnamed.b.cpuMs.postgres, pooled.a.cpuMs.postgres)} the CPU per request of named statements on unnamed ones without the pooler, ${times(pooled.b.cpuMs.postgres, pooled.a.cpuMs.postgres)} through it.`),
      '',
      'When the unnamed statements cost PostgreSQL as much without the pooler as through it, the pooled rows\' loss is theirs (parse and plan at every run), not pgbouncer\'s: its own CPU is the pgbouncer column, its hop one more loopback round trip per statement. On this machine the cores are shared, so PostgreSQL\'s extra CPU is taken from the web process and shows as throughput; with PostgreSQL on cores of its own it shows as PostgreSQL capacity (the table above).',
    );
  }

  const p = busiest('processes');
  if (p) {
    const n = os.cpus().length;
    const full = p.a.cores.machine >= 0.9 * n;
    const failed = p.a.non2xx + p.b.non2xx + p.a.errors + p.b.errors;
    lines.push('', '## One web process or two', '');
    lines.push(
      `Two web processes (through pgbouncer) carried **${f(p.ratio, 2)} ×** what one did, at ${p.connections} connections from two load processes of ${p.connections / 2} each. ` +
        `With one process its ${n} cores were busy ${f(p.a.cores.machine, 2)} (the web process ${f(p.a.cores.web, 2)}, PostgreSQL ${f(p.a.cores.postgres, 2)}, pgbouncer ${f(p.a.cores.pgbouncer, 2)}; the rest is the load processes and whatever else ran); ` +
        `with two, ${f(p.b.cores.machine, 2)} (the web processes ${f(p.b.cores.web, 2)}, PostgreSQL ${f(p.b.cores.postgres, 2)}, pgbouncer ${f(p.b.cores.pgbouncer, 2)}). ` +
        (full
          ? 'The cores were already full with one process: a second one can only take CPU from PostgreSQL, pgbouncer and the load generator on the same cores, and more busy processes than cores cost more per request (switching, colder caches, fewer requests per event-loop turn in each): '
          : 'The cores were not full with one process: the difference is what the second process found free, less what more processes cost per request: ') +
        `web CPU per request ${f(p.a.cpuMs.web, 3)} ms with one, ${f(p.b.cpuMs.web, 3)} ms with two. ` +
        (failed ? `⚠ ${failed} requests failed. ` : 'Every answer of both was 2xx: two processes share the database and the pooler without error. ') +
        'How far web processes scale is the capacity table: each needs a core of its own, and one PostgreSQL core feeds as many as it carries.',
    );
  }

  lines.push('', '## How it was measured', '');
  lines.push(
    `- Service: \`node dist/src/main.js\` built, NODE_ENV=production, LOG_LEVEL=warn, WEB_CONCURRENCY=1, WORKER=false (web-only processes, as behind a separate \`npm run worker\`), DB_POOL_SIZE=${m.dbPoolSize} in every process. Processes on one database: *direct* (DATABASE_URL = the primary), *pooled* and a second pooled one (DATABASE_URL = pgbouncer with \`?pgbouncer=true\`, DIRECT_URL = the primary), and for the *-unnamed rows *unnamed* (DATABASE_URL = the primary itself with \`?pgbouncer=true\`, DIRECT_URL = the primary). A process not under load stays idle.`,
    `- pgbouncer: ${Object.entries(m.pgbouncerSettings).map(([k, v]) => `${k}=${v}`).join(', ')} (server connections ≥ the two pooled processes' pools together, so the pooler never queues them).`,
    `- Data: ${f(m.tokens)} seeded tokens (bench/seed.ts); the Bearer load presents a hundred of them in turn, the token creation is the admin's (token 1) for the bench client, as bench/run.ts's scenarios 1 and 6.`,
    '- Load: autocannon 9 in separate processes (bench/load.ts), pipelining 1; the processes row always uses two load processes (so the load generator is the same on both sides), each with half the connections, both to the one process or one to each; its p50 is the two processes\' weighted by responses, its p99 the larger.',
    '- CPU: /proc/<pid>/stat (utime + stime) of each web process, of pgbouncer, and of the postmaster with its children (cutime + cstime for the backends that ended), sampled just before the load processes start and just after they end; /proc/stat for the machine.',
    `- Rows run: ${m.rows.join(', ')}; pg_stat_statements not used (it needs shared_preload_libraries on the server).`,
  );
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- the run

/** Wall time the run should take (start-up, seed, warm-ups, measurements with a load process's start each). */
function expectedSeconds(opts: Options): number {
  const perRound = [...opts.rows].reduce((n, row) => n + 2 * (ROW_DEFS[row].allLoads ? opts.connections.length : 1), 0);
  return 20 + opts.tokens / 20_000 + 7 * (opts.warmupSeconds + 1) + opts.rounds * perRound * (opts.durationSeconds + 0.8);
}

/** Runs the rows on a database of its own; writes <out>/scaling.{json,md}. */
export async function runScalingBench(opts: Options, log: (line: string) => void = console.log): Promise<ScalingReport> {
  const started = Date.now();
  if (!pgbouncerBinary()) throw new Error('bench:scaling needs pgbouncer (apt-get install pgbouncer)');
  mkdirSync(opts.out, { recursive: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-scaling-'));
  const serverUrl = process.env.BENCH_DATABASE_URL ?? (await throwawayPostgres()).url;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const name = `bench_scaling_${process.pid}_${randomBytes(3).toString('hex')}`;
  const servers: Server[] = [];
  let bouncer: Pgbouncer | undefined;
  try {
    const postgres = (await admin.query('SHOW server_version')).rows[0].server_version as string;
    await admin.query(`CREATE DATABASE ${name}`);
    const url = serverUrl.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
    const migrator = await createDb({ databaseUrl: url, poolSize: 1 });
    await migrate(migrator);
    await migrator.close();
    const hashKey = randomBytes(32).toString('hex');
    const fixture = await seed({ url, hashKey, tokens: opts.tokens, callbackAccounts: 0, basicUsers: 0 });
    log(`seeded ${opts.tokens.toLocaleString('en')} tokens in ${fixture.seconds.toFixed(1)} s; expected duration ≈ ${expectedSeconds(opts).toFixed(0)} s`);

    bouncer = await startPgbouncer(url, await freePort(), { poolSize: opts.bouncerPool, maxClientConn: opts.maxClientConn });
    children.add(bouncer.child);
    const version = execFileSync(pgbouncerBinary()!, ['--version']).toString().split('\n')[0].trim();
    const postmaster = await postmasterOf(url);
    const probe: Probe = { postmaster, bouncer };
    const main = path.join(ROOT, 'dist/src/main.js');
    const common = { HASH_KEY: hashKey, DB_POOL_SIZE: String(opts.pool), WEB_CONCURRENCY: '1', WORKER: 'false' };
    const pooledEnv = { ...common, DATABASE_URL: bouncer.url, DIRECT_URL: url };
    const rows = ROWS.filter((r) => opts.rows.has(r));
    const unnamedRows = rows.some((r) => ROW_DEFS[r].b === 'unnamed');
    const [direct, pooled, pooled2, unnamed] = await Promise.all([
      startServer('direct', main, { ...common, DATABASE_URL: url }),
      startServer('pooled', main, pooledEnv),
      startServer('pooled 2', main, pooledEnv),
      // the pooler's statements without the pooler: ?pgbouncer=true on the primary itself
      ...(unnamedRows ? [startServer('unnamed', main, { ...common, DATABASE_URL: `${url}?pgbouncer=true`, DIRECT_URL: url })] : []),
    ]);
    servers.push(direct, pooled, pooled2, ...(unnamed ? [unnamed] : []));
    log(`web processes: direct (pid ${direct.child.pid}), pooled (pid ${pooled.child.pid}), pooled 2 (pid ${pooled2.child.pid})${unnamed ? ` and unnamed (pid ${unnamed.child.pid})` : ''}; pooled ones through ${version} (pid ${bouncer.child.pid}, default_pool_size ${opts.bouncerPool}); PostgreSQL ${postmaster ? `postmaster pid ${postmaster}` : 'not on this machine: its CPU is not measured'}`);

    const loads = { bearer: bearerLoad(fixture.tokens), create: tokenCreationLoad(fixture) };
    const targets: Record<Variant, Target> = {
      direct: { servers: [direct], loaders: 1 },
      pooled: { servers: [pooled], loaders: 1 },
      unnamed: { servers: unnamed ? [unnamed] : [], loaders: 1 },
      one: { servers: [pooled], loaders: 2 },
      two: { servers: [pooled, pooled2], loaders: 2 },
    };
    const connectionsOf = (row: Row) => (ROW_DEFS[row].allLoads ? opts.connections : [opts.busiest]);

    // warm-up: JIT, plan caches, every pool connection (at the busiest load), once per process and load
    const warmed = new Set<string>();
    for (const row of rows) {
      for (const variant of [ROW_DEFS[row].a, ROW_DEFS[row].b]) {
        if (warmed.has(`${variant} ${ROW_DEFS[row].load}`)) continue;
        warmed.add(`${variant} ${ROW_DEFS[row].load}`);
        await measureOnce(targets[variant], loads[ROW_DEFS[row].load], Math.max(...connectionsOf(row)), opts.warmupSeconds, probe, tmp);
      }
    }
    log('warmed up');

    const measurements: Measurement[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      for (const row of rows) {
        for (const connections of connectionsOf(row)) {
          const { a, b } = ROW_DEFS[row];
          for (const variant of round % 2 ? [a, b] : [b, a]) {
            const m: Measurement = { row, variant, round, connections, ...(await measureOnce(targets[variant], loads[ROW_DEFS[row].load], connections, opts.durationSeconds, probe, tmp)) };
            measurements.push(m);
            const ms = (cpu: number | undefined) => (cpu === undefined ? '–' : (perRequestMs(cpu, m) ?? NaN).toFixed(3));
            const bad = m.non2xx || m.errors ? ` (${m.non2xx} non-2xx ${JSON.stringify(m.statusCodes)}, ${m.errors} errors)` : '';
            log(`round ${round} ${String(connections).padStart(3)} conn ${row.padEnd(9)} ${variant.padEnd(6)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms  CPU ms/req web ${ms(m.cpu.web)} pg ${ms(m.cpu.postgres)} pgbouncer ${ms(m.cpu.pgbouncer)}${bad}`);
          }
        }
      }
    }

    const judged = opts.mode !== 'smoke';
    const summaries = rows.map((row) => summarise(row, connectionsOf(row), measurements, judged));
    const report: ScalingReport = {
      meta: {
        date: new Date().toISOString(), mode: opts.mode, judged, node: process.version,
        cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`, postgres, pgbouncer: version, totalSeconds: (Date.now() - started) / 1000,
        tokens: opts.tokens, rounds: opts.rounds, durationSeconds: opts.durationSeconds, warmupSeconds: opts.warmupSeconds, dbPoolSize: opts.pool, webConcurrency: 1, worker: false,
        pgbouncerSettings: { pool_mode: bouncer.settings.pool_mode, default_pool_size: bouncer.settings.default_pool_size, max_client_conn: bouncer.settings.max_client_conn },
        ...(postmaster ? {} : { postgresCpuMissing: 'the server is not a process of this machine' }),
        rows,
      },
      rows: summaries,
      capacity: capacityOf(summaries),
      measurements,
    };
    writeFileSync(path.join(opts.out, 'scaling.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(opts.out, 'scaling.md'), markdown(report));
    for (const s of summaries) for (const l of s.loads) log(`${s.row} at ${l.connections} connections: ${s.b} / ${s.a} = ${l.ratio.toFixed(2)} (${l.ratios.map((x) => x.toFixed(2)).join(', ')})`);
    log(`scaling report: ${path.join(opts.out, 'scaling.md')} (${report.meta.totalSeconds.toFixed(0)} s)`);
    return report;
  } finally {
    for (const s of servers) await s.stop();
    if (bouncer) {
      await bouncer.stop();
      children.delete(bouncer.child);
    }
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchMain('scaling', ROWS, (args, log) => runScalingBench({ ...scalingOptions(args.mode, args.out), ...(args.only ? { rows: args.only } : {}) }, log));
}
