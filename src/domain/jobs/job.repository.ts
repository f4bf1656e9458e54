import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { INSERT_COLUMNS } from './job-sql';

// The jobs table (prisma/schema.prisma, model Job): the background engine's outbox.
// enqueue() runs on the connection of the transaction that makes the change, so the
// job commits or rolls back with it; the engine (src/jobs/engine.ts) claims, finishes
// and retries jobs of every account (CROSS_TENANT.jobEngine).

/** A job to write: what runs it, and when. */
export interface NewJob {
  kind: string;
  payload?: Record<string, unknown>;
  /** at most one pending job per (kind, key): a second enqueue with the key is dropped */
  key?: string;
  /** seconds from now (0: due at once) */
  delaySeconds?: number;
  maxAttempts?: number;
}

/** A job a process holds: run it, then finish or fail it with the same attempt. */
export interface ClaimedJob {
  id: bigint;
  accountId: bigint | null;
  kind: string;
  key: string | null;
  payload: Record<string, unknown>;
  /** this attempt's number, from 1 */
  attempt: number;
  maxAttempts: number;
  createdAt: Date;
}

export interface JobQueueStats {
  /** jobs not dead: due, running or scheduled */
  pending: number;
  /** due and not held by any process */
  due: number;
  /** held by a process under a live lease */
  running: number;
  /** seconds the oldest due job has waited; 0 when none */
  oldestDueSeconds: number;
  /** attempts used up, or failed for good */
  dead: number;
}

interface ClaimedRow {
  id: string;
  account_id: string | null;
  kind: string;
  key: string | null;
  payload: Record<string, unknown>;
  attempts: number;
  max_attempts: number;
  created_at: Date;
}

// NOTIFY (delivered at commit, and only then) wakes the engines of every process at once.
const NOTIFY_DUE = "SELECT (SELECT count(*)::int FROM j) AS n, (SELECT pg_notify('jobs', '') FROM j LIMIT 1) AS notified";
// Due `delaySeconds` after the statement that enqueues, not after the transaction began:
// a timer set by a decision that first waited for a lock (an offer's expiry) runs its full length.
// Every time here is statement_timestamp(), never now(): a job written by one statement must be
// due for a claim that starts after it, and on PGlite now() (the transaction's start) may read a
// millisecond or more before an earlier statement's statement_timestamp() (a claim then missed a
// job enqueued just before it, a flaky CI run).
const VALUES = "VALUES ($1, $2, $3, $4::jsonb, statement_timestamp() + make_interval(secs => $5::float8), $6) ON CONFLICT (kind, key) DO NOTHING RETURNING run_at";

function values(job: NewJob): unknown[] {
  return [job.kind, job.key ?? null, JSON.stringify(job.payload ?? {}), Math.max(0, job.delaySeconds ?? 0), job.maxAttempts ?? 25];
}

export class JobRepository {
  constructor(private readonly db: TenantSql) {}

  /** Writes a job of the scope's account (in the caller's transaction); whether it was new (false: a pending job had its key). */
  async enqueue(scope: AccountScope, job: NewJob): Promise<boolean> {
    const [row] = await this.db.query<{ n: number }>(scope, `WITH j AS (${INSERT_COLUMNS}${VALUES}) ${NOTIFY_DUE}`, values(job));
    return row.n === 1;
  }

  /** The service's own work (no account): retention, recurring jobs. */
  async enqueueSystem(job: NewJob): Promise<boolean> {
    const [row] = await this.db.crossTenant<{ n: number }>(
      'jobEngine',
      `WITH j AS (${INSERT_COLUMNS}SELECT NULL::bigint, $1, $2, $3::jsonb, statement_timestamp() + make_interval(secs => $4::float8), $5 ON CONFLICT (kind, key) DO NOTHING RETURNING run_at) ${NOTIFY_DUE}`,
      values(job),
    );
    return row.n === 1;
  }

  /**
   * Takes up to `limit` due jobs of these kinds for `worker`, for `leaseSeconds`: oldest due
   * first, skipping those another process is taking (SKIP LOCKED), so that no job is held
   * by two processes under live leases.
   */
  async claim(worker: string, kinds: readonly string[], limit: number, leaseSeconds: number): Promise<ClaimedJob[]> {
    const rows = await this.db.crossTenant<ClaimedRow>(
      'jobEngine',
      `UPDATE jobs j SET attempts = j.attempts + 1, locked_by = $1, locked_until = statement_timestamp() + make_interval(secs => $2::float8)
       FROM (SELECT id FROM jobs
             WHERE run_at <= statement_timestamp() AND dead_at IS NULL AND (locked_until IS NULL OR locked_until <= statement_timestamp()) AND kind = ANY($3::text[])
             ORDER BY run_at, id LIMIT $4 FOR UPDATE SKIP LOCKED) due
       WHERE j.id = due.id
       RETURNING j.id, j.account_id, j.kind, j.key, j.payload, j.attempts, j.max_attempts, j.created_at`,
      [worker, leaseSeconds, kinds, limit],
    );
    return rows.map((r) => ({
      id: BigInt(r.id),
      accountId: r.account_id === null ? null : BigInt(r.account_id),
      kind: r.kind,
      key: r.key,
      payload: r.payload,
      attempt: r.attempts,
      maxAttempts: r.max_attempts,
      createdAt: r.created_at,
    }));
  }

  /**
   * Done: the job is removed, or (recurring) due again after `againInSeconds`. Only the
   * attempt that holds it may finish it: false when its lease had expired and another
   * process claimed it meanwhile.
   */
  async finish(worker: string, job: ClaimedJob, againInSeconds?: number): Promise<boolean> {
    const rows =
      againInSeconds === undefined
        ? await this.db.crossTenant('jobEngine', 'DELETE FROM jobs WHERE id = $1 AND locked_by = $2 AND attempts = $3 RETURNING id', [job.id, worker, job.attempt])
        : await this.db.crossTenant(
            'jobEngine',
            `UPDATE jobs SET run_at = statement_timestamp() + make_interval(secs => $4::float8), attempts = 0, locked_by = NULL, locked_until = NULL, last_error = NULL
             WHERE id = $1 AND locked_by = $2 AND attempts = $3 RETURNING id`,
            [job.id, worker, job.attempt, againInSeconds],
          );
    return rows.length === 1;
  }

  /**
   * Extends the lease of a job this worker still holds (a long job's heartbeat, so that no
   * other process claims it while it runs); false when the lease was lost meanwhile.
   */
  async renewLease(worker: string, job: Pick<ClaimedJob, 'id' | 'attempt'>, leaseSeconds: number): Promise<boolean> {
    const rows = await this.db.crossTenant(
      'jobEngine',
      'UPDATE jobs SET locked_until = statement_timestamp() + make_interval(secs => $4::float8) WHERE id = $1 AND locked_by = $2 AND attempts = $3 RETURNING id',
      [job.id, worker, job.attempt, leaseSeconds],
    );
    return rows.length === 1;
  }

  /** Failed: due again after `retryInSeconds`, or dead when `final` or its attempts are used up. */
  async fail(worker: string, job: ClaimedJob, error: string, retryInSeconds: number, final: boolean): Promise<'retry' | 'dead' | 'lost'> {
    const rows = await this.db.crossTenant<{ dead: boolean }>(
      'jobEngine',
      `UPDATE jobs SET run_at = statement_timestamp() + make_interval(secs => $4::float8), locked_by = NULL, locked_until = NULL, last_error = left($5, 2000),
         dead_at = CASE WHEN $6::boolean OR attempts >= max_attempts THEN statement_timestamp() END
       WHERE id = $1 AND locked_by = $2 AND attempts = $3 RETURNING dead_at IS NOT NULL AS dead`,
      [job.id, worker, job.attempt, retryInSeconds, error, final],
    );
    if (rows.length === 0) return 'lost';
    return rows[0].dead ? 'dead' : 'retry';
  }

  /** Gives back jobs this worker holds and has not started (a stopping process): due again at once, the attempt not counted. */
  async release(worker: string, jobs: readonly ClaimedJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.db.crossTenant(
      'jobEngine',
      'UPDATE jobs SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1 WHERE id = ANY($1::bigint[]) AND locked_by = $2',
      [jobs.map((j) => String(j.id)), worker],
    );
  }

  /** Seconds until the next job of these kinds is due (null: none), so that an idle engine wakes for its timers. */
  async nextDueInSeconds(kinds: readonly string[]): Promise<number | null> {
    const [row] = await this.db.crossTenant<{ s: number | null }>(
      'jobEngine',
      'SELECT EXTRACT(EPOCH FROM (min(greatest(run_at, coalesce(locked_until, run_at))) - statement_timestamp()))::float8 AS s FROM jobs WHERE dead_at IS NULL AND kind = ANY($1::text[])',
      [kinds],
    );
    return row.s === null ? null : Math.max(0, Number(row.s));
  }

  async stats(): Promise<JobQueueStats> {
    const [row] = await this.db.crossTenant<{ pending: number; due: number; running: number; oldest: number | null; dead: number }>(
      'jobEngine',
      `SELECT count(*) FILTER (WHERE dead_at IS NULL)::int AS pending,
              count(*) FILTER (WHERE dead_at IS NULL AND run_at <= statement_timestamp() AND (locked_until IS NULL OR locked_until <= statement_timestamp()))::int AS due,
              count(*) FILTER (WHERE dead_at IS NULL AND locked_until > statement_timestamp())::int AS running,
              EXTRACT(EPOCH FROM statement_timestamp() - min(run_at) FILTER (WHERE dead_at IS NULL AND run_at <= statement_timestamp() AND (locked_until IS NULL OR locked_until <= statement_timestamp())))::float8 AS oldest,
              count(*) FILTER (WHERE dead_at IS NOT NULL)::int AS dead
       FROM jobs`,
    );
    return { pending: row.pending, due: row.due, running: row.running, oldestDueSeconds: Math.max(0, Number(row.oldest ?? 0)), dead: row.dead };
  }
}
