export interface RollingWindow {
  accountId: bigint;
  bucket: string;
  limit: number;
  windowSeconds: number;
}

/** Adds a parameter to a statement being built and returns its placeholder ($n). */
export type Param = (value: unknown) => string;

// Advisory-lock namespace of rolling-window limits; any constant that every
// process shares (the migration lock and the login throttle use others).
const LOCK_NAMESPACE = 727073691;

/**
 * The statement that serialises one account's decisions on the database server:
 * a transaction-scoped advisory lock, to be run first in the transaction (it has
 * no parameters, so it can travel with BEGIN). Ids are BIGINT; the two-int lock
 * form takes the low 31 bits. Accounts that collide only share a lock (they wait
 * on each other), never a count.
 */
export function windowLock(w: RollingWindow): string {
  return `SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${Number(w.accountId & 0x7fffffffn)})`;
}

/**
 * The CTEs of one rolling-window decision, for a statement run after
 * windowLock() in the same transaction:
 *   - `clock`: the database's clock at the decision (clock_timestamp(), read after
 *     the lock, so times increase in decision order), truncated to the column's ms;
 *   - `counted`: `at`, `used` (hits in the window before this one) and
 *     `retry_after` (seconds until the oldest leaves the window);
 *   - hits that left the window are dropped, and this one is recorded when
 *     `used < limit`.
 * CTEs share one snapshot, so the count excludes this hit; the statement starts
 * after the lock, so it sees everything the previous holder committed. The
 * caller's own work goes in the same statement (or transaction) guarded by
 * `counted.used < limit`: a slot is spent only if that work commits.
 */
export function windowCtes(w: RollingWindow, p: Param): string {
  const account = p(String(w.accountId));
  const bucket = p(w.bucket);
  const window = `make_interval(secs => ${p(w.windowSeconds)}::int)`;
  return `clock AS (SELECT date_trunc('milliseconds', clock_timestamp()) AS now),
    purged AS (
      DELETE FROM rate_limit_hits h USING clock
      WHERE h.account_id = ${account}::bigint AND h.bucket = ${bucket} AND h.created_at <= clock.now - ${window}
    ),
    counted AS (
      SELECT clock.now AS at, count(h.id)::int AS used,
             GREATEST(1, CEIL(EXTRACT(EPOCH FROM min(h.created_at) + ${window} - clock.now)))::int AS retry_after
      FROM clock
      LEFT JOIN rate_limit_hits h
        ON h.account_id = ${account}::bigint AND h.bucket = ${bucket} AND h.created_at > clock.now - ${window}
      GROUP BY clock.now
    ),
    recorded AS (
      INSERT INTO rate_limit_hits (account_id, bucket, created_at)
      SELECT ${account}::bigint, ${bucket}, counted.at FROM counted WHERE counted.used < ${p(w.limit)}::int
    )`;
}

/** A statement builder: `p(value)` adds a parameter and returns its placeholder. */
export function params(): { p: Param; values: unknown[] } {
  const values: unknown[] = [];
  return { values, p: (value) => (values.push(value), `$${values.length}`) };
}
