import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../db/create-db';
import type { ReplicaState } from '../db/replicas';
import type { JobQueueStats } from '../domain/jobs/job.repository';
import type { JobEngineStats } from '../jobs/engine';
import type { EngineMetrics } from '../jobs/kinds';
import type { WebhookAttemptOutcome } from '../jobs/webhook-deliveries';

// What GET /metrics shows (docs/api.md, "Metrics"): one registry per app, so that the
// apps a test file builds in one process never share a counter.

/** The figures of the purge's last run, as the retention service reports them (structural: any object with lastRun). */
export interface RetentionSource {
  lastRun(): Promise<{ startedAt: Date; finishedAt: Date; durationMs: number; removed: Record<string, number>; nextRunAt: Date | null } | null>;
}

/** What is read from elsewhere at scrape time. */
export interface ScrapeSources {
  /** the pg pool's counts (PostgreSQL); absent on PGlite */
  pool?: () => PoolStats;
  /** the read replicas (READ_REPLICA_URL); absent without them */
  replicas?: () => ReplicaState[];
  /** the job queue, from the database (every process sees the same queue) */
  jobs: () => Promise<JobQueueStats>;
  retention?: RetentionSource;
  log: { warn(obj: object, msg: string): void };
}

/** The route label of a request no route matched (404s, malformed URLs): one value, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/** A slow database must not hang a scrape: each read gives up after this long (its figures are then left out). */
const SCRAPE_READ_TIMEOUT_MS = 2_000;

// prom-client's default buckets (5 ms to 10 s: past it, a request is broken, not slow) with
// 1 and 2.5 ms below them: a Bearer read on a warm pool answers within a few milliseconds.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Prefix of the Node process metrics (prom-client's defaults): helpdesk_process_cpu_seconds_total, … */
const PROCESS_PREFIX = 'helpdesk_';

let processRegistry: Registry | undefined;
/**
 * The process's own metrics (CPU, memory, event loop lag, GC), in one registry per process:
 * prom-client's collectors start an event-loop monitor and a GC observer that never stop, so
 * they are started once, and every app's scrape shows them.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: PROCESS_PREFIX });
  }
  return processRegistry;
}

function withTimeout<T>(read: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SCRAPE_READ_TIMEOUT_MS} ms`)), SCRAPE_READ_TIMEOUT_MS);
  });
  return Promise.race([read(), timeout]).finally(() => clearTimeout(timer));
}

/**
 * A gauge whose figure may be unknown (a read that failed, a purge that never ran):
 * then it has no sample at all, as Prometheus expects of an unknown value, rather than
 * a made-up 0 or NaN.
 */
class MaybeGauge extends Gauge {
  private known = false;

  /** a figure, or undefined when it is unknown */
  put(value: number | undefined): void {
    this.known = value !== undefined;
    if (value !== undefined) this.set(value);
  }

  async get() {
    const metric = await super.get();
    return this.known ? metric : { ...metric, values: [] };
  }
}

export class AppMetrics implements EngineMetrics {
  private readonly registry = new Registry();
  private readonly on = { registers: [this.registry] };
  private readonly requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by method, route pattern and status', labelNames: ['method', 'route', 'status_code'] as const, ...this.on });
  private readonly duration = new Histogram({
    name: 'http_request_duration_seconds', help: 'Time from receiving a request to sending its answer, by method, route pattern and status',
    labelNames: ['method', 'route', 'status_code'] as const, buckets: LATENCY_BUCKETS, ...this.on,
  });
  private readonly refusals = new Counter({ name: 'rate_limit_refusals_total', help: 'Requests refused with 429 by a rate limit, by method and route pattern', labelNames: ['method', 'route'] as const, ...this.on });
  private readonly webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total', help: "Webhook delivery attempts of this process's engine, by outcome: success, retrying (failed, tried again later), failed (failed, given up)",
    labelNames: ['outcome'] as const, ...this.on,
  });
  private readonly processed = new Counter({ name: 'jobs_processed_total', help: "Jobs this process's engine finished (done), retried or gave up (dead) since it started", labelNames: ['outcome'] as const, ...this.on });
  private readonly scrapeErrors = new Counter({ name: 'metrics_scrape_errors_total', help: 'Scrape-time reads that failed or timed out (their figures were left out), by source', labelNames: ['source'] as const, ...this.on });
  private readonly pool?: Record<keyof PoolStats, Gauge>;
  private readonly queue = {
    pending: new MaybeGauge({ name: 'jobs_pending', help: 'Background jobs not dead: due, running or scheduled', ...this.on }),
    due: new MaybeGauge({ name: 'jobs_due', help: 'Background jobs due and not held by any process', ...this.on }),
    running: new MaybeGauge({ name: 'jobs_running', help: 'Background jobs held by a process under a live lease', ...this.on }),
    dead: new MaybeGauge({ name: 'jobs_dead', help: 'Background jobs that used up their attempts or failed for good', ...this.on }),
    oldestDue: new MaybeGauge({ name: 'jobs_oldest_due_age_seconds', help: 'How long the oldest due job has waited (0 when none)', ...this.on }),
  };
  private readonly replicas?: { usable: Gauge<'replica'>; lag: Gauge<'replica'> };
  private readonly retention?: {
    finished: MaybeGauge; duration: MaybeGauge; removed: Gauge<'table'>; next: MaybeGauge;
  };
  private engine: { stats(): Promise<JobEngineStats> } | undefined;
  /** what the engine had processed at the last scrape: the counter grows by the difference */
  private counted = { done: 0, retried: 0, dead: 0 };

  constructor(private readonly sources: ScrapeSources) {
    // started with the first app, not at its first scrape: the process's CPU counters count from here
    processMetrics();
    if (sources.pool) {
      this.pool = {
        total: new Gauge({ name: 'db_pool_connections', help: 'Database connections the pool holds open (idle or in use)', ...this.on }),
        idle: new Gauge({ name: 'db_pool_idle_connections', help: 'Database connections open and idle', ...this.on }),
        waiting: new Gauge({ name: 'db_pool_waiting_clients', help: 'Queries and transactions waiting for a database connection', ...this.on }),
        max: new Gauge({ name: 'db_pool_max_connections', help: 'The pool size (DB_POOL_SIZE)', ...this.on }),
      };
    }
    if (sources.replicas) {
      this.replicas = {
        usable: new Gauge({ name: 'db_replica_usable', help: 'Whether a read replica takes reads now (1) or is left out (0: unreachable, or further behind than REPLICA_MAX_LAG_MS)', labelNames: ['replica'] as const, ...this.on }),
        lag: new Gauge({ name: 'db_replica_lag_seconds', help: 'How far behind the primary a read replica is, at most (absent while unreachable)', labelNames: ['replica'] as const, ...this.on }),
      };
    }
    if (sources.retention) {
      this.retention = {
        finished: new MaybeGauge({ name: 'retention_last_run_timestamp_seconds', help: "When the purge's last run finished (Unix time; absent before the first)", ...this.on }),
        duration: new MaybeGauge({ name: 'retention_last_run_duration_seconds', help: "How long the purge's last run took", ...this.on }),
        removed: new Gauge({ name: 'retention_last_run_removed', help: "Rows the purge's last run removed, by table", labelNames: ['table'] as const, ...this.on }),
        next: new MaybeGauge({ name: 'retention_next_run_timestamp_seconds', help: 'When the purge runs next (Unix time; absent when unknown)', ...this.on }),
      };
    }
  }

  /** One answered request (the onResponse hook): cheap, two label lookups. */
  observeRequest(method: string, route: string, status: number, elapsedSeconds: number): void {
    const labels = { method, route, status_code: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, elapsedSeconds);
    if (status === 429) this.refusals.inc({ method, route });
  }

  /** (a property, handed to the engine's webhook deliveries as a callback) */
  readonly webhookAttempt = (outcome: WebhookAttemptOutcome): void => {
    this.webhookAttempts.inc({ outcome });
  };

  /** The engine of this process, whose processed jobs the scrape shows. */
  watchEngine(engine: { stats(): Promise<JobEngineStats> }): void {
    this.engine = engine;
    // each outcome shows (at 0) from the first scrape on, so that rates and alerts see it
    for (const outcome of ['success', 'retrying', 'failed'] as const) this.webhookAttempts.inc({ outcome }, 0);
  }

  /** The text a scrape answers: figures read now, then every metric of the app and of the process. */
  async scrape(): Promise<string> {
    await Promise.all([this.readJobs(), this.readRetention()]);
    this.readConnections();
    const [app, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    // prom-client writes NaN (the event loop's mean delay between two close scrapes) as "Nan":
    // Prometheus reads it, the format and stricter parsers say "NaN"
    return `${app}\n${process}`.replace(/ Nan$/gm, ' NaN');
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private readConnections(): void {
    const stats = this.sources.pool?.();
    if (stats && this.pool) for (const key of ['total', 'idle', 'waiting', 'max'] as const) this.pool[key].set(stats[key]);
    if (!this.replicas || !this.sources.replicas) return;
    for (const r of this.sources.replicas()) {
      const labels = { replica: r.name };
      this.replicas.usable.set(labels, r.usable ? 1 : 0);
      if (r.lagMs === null) this.replicas.lag.remove(labels);
      else this.replicas.lag.set(labels, r.lagMs / 1000);
    }
  }

  private async readJobs(): Promise<void> {
    let stats: JobQueueStats & Partial<Pick<JobEngineStats, 'processed'>>;
    try {
      const engine = this.engine;
      stats = await withTimeout(() => (engine ? engine.stats() : this.sources.jobs()));
    } catch (err) {
      this.failed('jobs', err);
      for (const gauge of Object.values(this.queue)) gauge.put(undefined);
      return;
    }
    this.queue.pending.put(stats.pending);
    this.queue.due.put(stats.due);
    this.queue.running.put(stats.running);
    this.queue.dead.put(stats.dead);
    this.queue.oldestDue.put(stats.oldestDueSeconds);
    if (stats.processed) {
      // (two scrapes at once may get their figures in either order: only ever forward)
      for (const outcome of ['done', 'retried', 'dead'] as const) {
        const now = stats.processed[outcome];
        // (by 0 too: each outcome shows from the first scrape on)
        this.processed.inc({ outcome }, Math.max(0, now - this.counted[outcome]));
        this.counted[outcome] = Math.max(now, this.counted[outcome]);
      }
    }
  }

  private async readRetention(): Promise<void> {
    const source = this.sources.retention;
    const gauges = this.retention;
    if (!source || !gauges) return;
    let run: Awaited<ReturnType<RetentionSource['lastRun']>>;
    try {
      run = await withTimeout(() => source.lastRun());
    } catch (err) {
      this.failed('retention', err);
      run = null;
    }
    gauges.finished.put(run ? run.finishedAt.getTime() / 1000 : undefined);
    gauges.duration.put(run ? run.durationMs / 1000 : undefined);
    gauges.next.put(run?.nextRunAt ? run.nextRunAt.getTime() / 1000 : undefined);
    gauges.removed.reset();
    for (const [table, rows] of Object.entries(run?.removed ?? {})) gauges.removed.set({ table }, rows);
  }

  private failed(source: string, err: unknown): void {
    this.scrapeErrors.inc({ source });
    this.sources.log.warn({ err, source }, 'metrics: a scrape-time read failed; its figures are left out of this scrape');
  }
}
