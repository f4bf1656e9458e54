import { setMaxListeners } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/create-db';
import type { ClaimedJob, JobQueueStats, JobRepository } from '../domain/jobs/job.repository';

// The background engine: runs the jobs of the jobs table (the transactional outbox of
// src/domain/jobs/job.repository.ts) in every process that starts it. Woken by NOTIFY
// when a job is committed, and by a poll (a missed notification, a retry or timer coming
// due); holds each job under a lease, so that a process killed mid-job loses nothing: its
// jobs are claimed again once their leases run out. At-least-once: a handler may see a job
// twice (a lease that expired while it still ran), so handlers are idempotent.

/** Thrown by a handler: do not retry (a receiver that refused for good, a record that is gone). */
export class FinalJobError extends Error {}

/** Thrown by a handler: retry, not before this many seconds (a Retry-After). */
export class RetryJobLater extends Error {
  constructor(message: string, readonly seconds: number) {
    super(message);
  }
}

export interface JobKind {
  run(job: ClaimedJob, signal: AbortSignal): Promise<void>;
  /** seconds before retry n (from 1) after a failure; default backoff() */
  retryIn?(attempt: number): number;
  /** recurring: due again this many seconds after each run (a key makes it one across processes) */
  everySeconds?: number;
  /**
   * A job that may run longer than the lease (the retention purge): while it runs, the
   * engine renews its lease every third of it, so that no other process claims it; if a
   * renewal finds the lease lost (this process stalled past it), the job's signal fires.
   */
  heartbeat?: boolean;
}

export interface JobEngineOptions {
  /** how long a claimed job is this process's; past it another process may take it */
  leaseSeconds?: number;
  /** the longest an idle engine sleeps without a notification */
  pollSeconds?: number;
  /** jobs run at once by this process */
  concurrency?: number;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Exponential backoff with full jitter: about 2 s, 4 s, 8 s … capped at 1 hour. */
function backoff(attempt: number): number {
  const ceiling = Math.min(3600, 2 ** Math.min(attempt, 12));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * Jobs a process runs at once, by default: a delivery mostly waits on its receiver (up
 * to 12 s), so that ten slow receivers must not hold every other delivery back; each job
 * holds a database connection only for its statements. JOB_CONCURRENCY sets it.
 */
export const DEFAULT_JOB_CONCURRENCY = 50;

export interface JobEngineStats extends JobQueueStats {
  /** this process: jobs it finished, retried and gave up since start */
  processed: { done: number; retried: number; dead: number };
}

export class JobEngine {
  private readonly kinds = new Map<string, JobKind>();
  private readonly worker = `${process.pid}:${randomUUID()}`;
  private readonly lease: number;
  private readonly poll: number;
  private readonly concurrency: number;
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private wake: (() => void) | undefined;
  private woken = false;
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly processed = { done: 0, retried: 0, dead: 0 };
  /** the last claim failed (the database is out of reach): logged once per outage */
  private claimFailing = false;

  constructor(
    private readonly db: Pick<Db, 'listen'>,
    private readonly jobs: JobRepository,
    private readonly options: JobEngineOptions = {},
  ) {
    this.lease = options.leaseSeconds ?? 60;
    this.poll = options.pollSeconds ?? 1;
    this.concurrency = options.concurrency ?? DEFAULT_JOB_CONCURRENCY;
    // every running job may listen for the stop (its request's signal): not a leak
    setMaxListeners(this.concurrency + 10, this.abort.signal);
  }

  /** Registers what runs the jobs of a kind (before start). */
  handle(kind: string, handler: JobKind): this {
    if (this.loop) throw new Error('register job kinds before start()');
    this.kinds.set(kind, handler);
    return this;
  }

  async start(): Promise<void> {
    if (this.loop) return;
    for (const [kind, handler] of this.kinds) {
      if (handler.everySeconds !== undefined) await this.jobs.enqueueSystem({ kind, key: 'recurring' });
    }
    this.unlisten = await this.db.listen('jobs', () => this.notify());
    this.loop = this.run();
  }

  /** Stops claiming, gives back what it claimed and has not started, and waits for the jobs that run (they finish or their lease expires). */
  async stop(): Promise<void> {
    if (!this.loop || this.abort.signal.aborted) return;
    this.abort.abort();
    this.notify();
    await this.unlisten?.();
    await this.loop;
    await Promise.allSettled([...this.running]);
  }

  async stats(): Promise<JobEngineStats> {
    return { ...(await this.jobs.stats()), processed: { ...this.processed } };
  }

  private notify(): void {
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    const kinds = [...this.kinds.keys()];
    while (!this.abort.signal.aborted) {
      this.woken = false;
      const free = this.concurrency - this.running.size;
      // claims in batches: once half the slots are free (or none runs), not one job per finished job
      const claiming = free > 0 && (this.running.size === 0 || free >= Math.ceil(this.concurrency / 2));
      let claimed: ClaimedJob[] = [];
      if (claiming) {
        try {
          claimed = await this.jobs.claim(this.worker, kinds, free, this.lease);
          if (this.claimFailing) this.options.log?.info({}, 'job engine: claiming jobs again');
          this.claimFailing = false;
        } catch (err) {
          // a database outage is not a bug: said once (a warning), then retried every poll until it is back
          if (!this.claimFailing) this.options.log?.warn({ err }, 'job engine: could not claim jobs; retrying every poll');
          this.claimFailing = true;
        }
      }
      if (this.abort.signal.aborted) {
        await this.jobs.release(this.worker, claimed).catch(() => {});
        break;
      }
      for (const job of claimed) this.track(this.execute(job));
      // a full batch: there may be more due at once
      if (claimed.length > 0 && claimed.length === free) continue;
      if (this.woken) continue;
      await this.sleep(claiming ? kinds : undefined);
    }
  }

  private track(task: Promise<void>): void {
    this.running.add(task);
    void task.finally(() => {
      this.running.delete(task);
      this.notify();
    });
  }

  /** Until a notification, a job finishing, the next timer (when `kinds` are given), or the poll interval. */
  private async sleep(kinds?: string[]): Promise<void> {
    let seconds = this.poll;
    if (kinds) {
      const next = await this.jobs.nextDueInSeconds(kinds).catch(() => null);
      if (next !== null) seconds = Math.min(seconds, next);
    }
    if (this.woken || this.abort.signal.aborted) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(5, seconds * 1000));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = undefined;
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const handler = this.kinds.get(job.kind)!;
    const beat = handler.heartbeat ? this.heartbeat(job) : undefined;
    try {
      await handler.run(job, beat?.signal ?? this.abort.signal);
      if (beat?.lost()) {
        this.options.log?.warn({ job: String(job.id), kind: job.kind }, 'job stopped: its lease was lost (another process may run it)');
        return;
      }
      if (await this.jobs.finish(this.worker, job, handler.everySeconds)) this.processed.done++;
      else this.options.log?.warn({ job: String(job.id), kind: job.kind }, 'job finished after its lease expired: another process had claimed it');
    } catch (err) {
      if (beat?.lost()) {
        this.options.log?.warn({ job: String(job.id), kind: job.kind }, 'job stopped: its lease was lost (another process may run it)');
        return;
      }
      if (this.abort.signal.aborted) {
        // stopped mid-job: given back uncounted, for this or another process to run again
        await this.jobs.release(this.worker, [job]).catch(() => {});
        return;
      }
      const final = err instanceof FinalJobError;
      const retryIn = err instanceof RetryJobLater ? err.seconds : (handler.retryIn ?? backoff)(job.attempt);
      const message = err instanceof Error ? err.message : String(err);
      const outcome = await this.jobs.fail(this.worker, job, message, retryIn, final).catch(() => 'lost' as const);
      if (outcome === 'dead') this.processed.dead++;
      else if (outcome === 'retry') this.processed.retried++;
      const log = { job: String(job.id), kind: job.kind, attempt: job.attempt, outcome, error: message };
      if (outcome === 'dead') this.options.log?.error(log, 'job failed for good');
      else this.options.log?.warn(log, 'job failed');
    } finally {
      beat?.stop();
    }
  }

  /** Renews a long job's lease every third of it while it runs; its signal fires on stop() or when the lease is lost. */
  private heartbeat(job: ClaimedJob): { signal: AbortSignal; lost(): boolean; stop(): void } {
    const lease = new AbortController();
    let lost = false;
    const timer = setInterval(() => {
      this.jobs.renewLease(this.worker, job, this.lease).then(
        (held) => {
          if (held || lost) return;
          lost = true;
          lease.abort();
        },
        // a database outage: the next beat tries again (the lease has two thirds left)
        () => {},
      );
    }, (this.lease * 1000) / 3);
    timer.unref();
    return { signal: AbortSignal.any([this.abort.signal, lease.signal]), lost: () => lost, stop: () => clearInterval(timer) };
  }
}
