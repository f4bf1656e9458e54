import type { TenantSql } from '../../db/tenant-sql';
import { EVENT_PUBLISHED_JOB } from '../events/event-log.repository';
import { RETENTION_JOB } from './retention-settings';

// The only module that deletes what is over (docs/api.md, "Retention"): one rule per
// table, each a range of one index (prisma/migrations/*_retention_indexes) below a cutoff.
// A batch is one statement, so one short transaction: it selects at most `limit` rows of
// the range in index order with FOR UPDATE SKIP LOCKED (a row a live request holds is
// left for the next run, and no live request waits for this one to select), deletes
// them, and says where the range stands, so that the next batch starts there and never
// scans again what a batch has passed. The rules are stateless: a run stopped half-way
// leaves nothing behind that the next run does not find again.

/** The tables the purge removes from, in the order it visits them. */
export const RETENTION_TABLES = [
  // codes before their grants (a grant's codes go with it, ON DELETE CASCADE, uncounted)
  'oauth_authorization_codes',
  // tokens before their grants: fewer tokens to set grant_id NULL on (ON DELETE SET NULL)
  'oauth_tokens',
  'oauth_grants',
  'oauth_client_secrets',
  'oauth_client_token_counts',
  'rate_window_hits',
  // invocations (their attempts ON DELETE CASCADE) before the events they sent
  'webhook_invocations',
  'events',
  'jobs',
  'audit_logs',
  // their history ON DELETE CASCADE
  'callback_requests',
  'oauth_sessions',
] as const;

export type RetentionTable = (typeof RETENTION_TABLES)[number];

/**
 * When a token is over for good: revoked, or its access token expired and its refresh
 * token (if any) expired too. NULL: never (no expiry, not revoked). A token whose access
 * token has expired but whose refresh token is still valid is alive. least/greatest
 * ignore NULLs; the CASE keeps a token without expiry alive whatever its refresh token
 * says. The expression of the index oauth_tokens_retention_idx, word for word.
 */
const TOKEN_OVER = (t: string) =>
  `least(${t}.revoked_at, CASE WHEN ${t}.expires_at IS NOT NULL THEN greatest(${t}.expires_at, ${t}.refresh_token_expires_at) END)`;

interface Rule {
  /** the indexed expression over alias x; a row is removed once it is below the cutoff */
  key: string;
  /** further conditions (alias x; $1 is the cutoff) */
  where?: string;
  /** the primary key's columns, to delete the rows selected */
  pk?: readonly string[];
}

const RULES: Record<RetentionTable, Rule> = {
  // used, or expired unused: over since the first of the two
  oauth_authorization_codes: { key: 'least(x.used_at, x.expires_at)' },
  oauth_tokens: { key: TOKEN_OVER('x') },
  // A family is over when revoked, or when nothing can come of it any more: no code of it
  // still usable or recent, and every token of it over, each for longer than the retention
  // (created_at bounds both: a grant is never revoked or over before it was created).
  oauth_grants: {
    key: 'x.created_at',
    where: `AND (x.revoked_at < $1 OR (x.revoked_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM oauth_authorization_codes c WHERE c.grant_id = x.id AND least(c.used_at, c.expires_at) >= $1)
              AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = x.id AND (${TOKEN_OVER('t')} IS NULL OR ${TOKEN_OVER('t')} >= $1))))`,
  },
  // a previous secret whose grace period is over (the current one has no expires_at)
  oauth_client_secrets: { key: 'x.expires_at' },
  // the issuing statement reads only buckets not ended yet (ends_at > now())
  oauth_client_token_counts: { key: 'x.ends_at', pk: ['client_id', 'ends_at', 'shard'] },
  rate_window_hits: { key: 'x.expires_at' },
  // completed_at is set when an invocation becomes success or failed, and only then
  webhook_invocations: { key: 'x.completed_at', where: "AND x.status IN ('success', 'failed')" },
  // An event is read again by its fan-out job (event.published, created in the event's
  // transaction: the same now()) and by every attempt of an unfinished invocation: kept
  // while either may still come.
  events: {
    key: 'x.time',
    where: `AND x.time < (SELECT coalesce(min(j.created_at), 'infinity') FROM jobs j WHERE j.kind = '${EVENT_PUBLISHED_JOB}' AND j.dead_at IS NULL)
            AND NOT EXISTS (SELECT 1 FROM webhook_invocations i WHERE i.completed_at IS NULL AND i.event_id = x.id)`,
  },
  // done jobs are deleted by the engine itself; dead ones are kept a while for operators
  jobs: { key: 'x.dead_at', where: 'AND x.dead_at IS NOT NULL' },
  audit_logs: { key: 'x.created_at' },
  // finished: completed_at, else the last change, else the creation
  callback_requests: { key: 'coalesce(x.completed_at, x.updated_at, x.created_at)', where: "AND x.status IN ('completed', 'failed', 'cancelled')" },
  // a sign-in session is over once signed out or expired (index oauth_sessions_retention_idx)
  oauth_sessions: { key: 'least(x.ended_at, x.expires_at)' },
};

/** The statement of one batch: $1 the cutoff, $2 where the range resumes, $3 the batch size. */
function batchSql(table: RetentionTable): string {
  const { key, where = '', pk = ['id'] } = RULES[table];
  const columns = pk.map((c) => `x.${c}`).join(', ');
  const match = pk.map((c) => `y.${c} = doomed.${c}`).join(' AND ');
  return `WITH doomed AS (
      SELECT ${columns}, ${key} AS k FROM ${table} x
       WHERE ${key} < $1 AND ${key} >= $2 ${where}
       ORDER BY ${key} LIMIT $3 FOR UPDATE OF x SKIP LOCKED
    ), gone AS (DELETE FROM ${table} y USING doomed WHERE ${match} RETURNING doomed.k)
    SELECT count(*)::int AS n, max(k) AS last FROM gone`;
}

/** What a batch would remove, counted instead (a dry run): $1 the cutoff. */
function countSql(table: RetentionTable): string {
  const { key, where = '' } = RULES[table];
  return `SELECT count(*)::int AS n FROM ${table} x WHERE ${key} < $1 ${where}`;
}

// fixed texts, built once: each is one prepared statement per connection
const BATCH = Object.fromEntries(RETENTION_TABLES.map((t) => [t, batchSql(t)])) as Record<RetentionTable, string>;
const COUNT = Object.fromEntries(RETENTION_TABLES.map((t) => [t, countSql(t)])) as Record<RetentionTable, string>;

/** Where a table's range starts: before every row. */
export const RANGE_START = '-infinity';

/** Runs kept in retention_runs: enough for an operator to see a trend, bounded like everything else. */
const RUNS_KEPT = 100;

/** A real run's figures, as stored. */
export interface StoredRun {
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  removed: Record<string, number>;
  stopped: boolean;
}

export class RetentionRepository {
  constructor(private readonly db: TenantSql) {}

  /** The database's clock: the instant every condition of a run compares with, unless the caller gives one. */
  async now(): Promise<Date> {
    const [row] = await this.db.crossTenant<{ now: Date }>('retention', 'SELECT now() AS now');
    return row.now;
  }

  /**
   * Deletes at most `limit` rows of the table over before `cutoff` whose key is at or
   * after `from` (RANGE_START, or the `last` of the previous batch), lowest key first.
   * `n` rows deleted; `last`, the highest key among them (null when none).
   */
  async purgeBatch(table: RetentionTable, cutoff: Date, from: Date | typeof RANGE_START, limit: number): Promise<{ n: number; last: Date | null }> {
    const [row] = await this.db.crossTenant<{ n: number; last: Date | null }>('retention', BATCH[table], [cutoff, from, limit]);
    return { n: row.n, last: row.last };
  }

  /** How many rows purgeBatch would remove from the table, all batches together (a dry run). */
  async countOver(table: RetentionTable, cutoff: Date): Promise<number> {
    const [row] = await this.db.crossTenant<{ n: number }>('retention', COUNT[table], [cutoff]);
    return row.n;
  }

  /** Stores a real run's figures, and forgets all but the last RUNS_KEPT runs. */
  async recordRun(run: StoredRun): Promise<void> {
    await this.db.crossTenant(
      'retention',
      `WITH added AS (
         INSERT INTO retention_runs (started_at, finished_at, duration_ms, removed, stopped) VALUES ($1, $2, $3, $4::jsonb, $5) RETURNING id
       )
       DELETE FROM retention_runs r WHERE r.id <= (SELECT id FROM added) - $6`,
      [run.startedAt, run.finishedAt, Math.round(run.durationMs), JSON.stringify(run.removed), run.stopped, RUNS_KEPT],
    );
  }

  /** The last run any process stored, and when the recurring job is due next (null: not scheduled); null before the first run. */
  async lastRun(): Promise<(StoredRun & { nextRunAt: Date | null }) | null> {
    const [row] = await this.db.crossTenant<{
      started_at: Date; finished_at: Date; duration_ms: number; removed: Record<string, number>; stopped: boolean; next_run_at: Date | null;
    }>(
      'retention',
      `SELECT r.started_at, r.finished_at, r.duration_ms, r.removed, r.stopped,
              (SELECT j.run_at FROM jobs j WHERE j.kind = $1 AND j.key = 'recurring' AND j.dead_at IS NULL) AS next_run_at
         FROM retention_runs r ORDER BY r.id DESC LIMIT 1`,
      [RETENTION_JOB],
    );
    if (!row) return null;
    return {
      startedAt: row.started_at, finishedAt: row.finished_at, durationMs: row.duration_ms, removed: row.removed, stopped: row.stopped, nextRunAt: row.next_run_at,
    };
  }
}
