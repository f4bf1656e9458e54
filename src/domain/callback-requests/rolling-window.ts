import type { Prisma } from '../../generated/prisma/client';
import { RateLimitedError } from '../errors';

export interface RollingWindow {
  accountId: bigint;
  bucket: string;
  limit: number;
  windowSeconds: number;
}

export interface Slot {
  /** the database clock at the decision, truncated to the column's milliseconds */
  at: Date;
  limit: number;
  remaining: number;
}

// Advisory-lock namespace of rolling-window limits; any constant that every
// process shares (the migration lock uses another one).
const LOCK_NAMESPACE = 727073691;

/**
 * Takes one slot of a per-account rolling window inside the caller's
 * transaction, or throws RateLimitedError. The hit is recorded in the same
 * transaction as the caller's work, so a slot is spent only if that work commits.
 *
 * Exact across processes: the transaction-scoped advisory lock serialises the
 * decisions of one account on the database server; the decision statement
 * starts after the lock, so it sees everything the previous holder committed,
 * and its time comes from the database's clock (clock_timestamp(), read after
 * the lock, so times increase in decision order).
 */
export async function takeSlot(tx: Prisma.TransactionClient, w: RollingWindow): Promise<Slot> {
  // Ids are BIGINT; the two-int lock form takes the low 31 bits. Accounts that
  // collide only share a lock (they wait on each other), never a count.
  const key = Number(w.accountId & 0x7fffffffn);
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}::int4, ${key}::int4)`;
  const window = w.windowSeconds;
  // One statement: drop hits that left the window, count the others, and record
  // this one if there is room (CTEs share one snapshot: the count excludes it).
  const [row] = await tx.$queryRaw<{ at: Date; used: number; retry_after: number | null }[]>`
    WITH clock AS (SELECT date_trunc('milliseconds', clock_timestamp()) AS now),
    purged AS (
      DELETE FROM rate_limit_hits h USING clock
      WHERE h.account_id = ${w.accountId} AND h.bucket = ${w.bucket}
        AND h.created_at <= clock.now - make_interval(secs => ${window}::int)
    ),
    counted AS (
      SELECT clock.now AS at, count(h.id)::int AS used,
             GREATEST(1, CEIL(EXTRACT(EPOCH FROM min(h.created_at) + make_interval(secs => ${window}::int) - clock.now)))::int AS retry_after
      FROM clock
      LEFT JOIN rate_limit_hits h
        ON h.account_id = ${w.accountId} AND h.bucket = ${w.bucket}
       AND h.created_at > clock.now - make_interval(secs => ${window}::int)
      GROUP BY clock.now
    ),
    recorded AS (
      INSERT INTO rate_limit_hits (account_id, bucket, created_at)
      SELECT ${w.accountId}, ${w.bucket}, counted.at FROM counted WHERE counted.used < ${w.limit}::int
    )
    SELECT at, used, retry_after FROM counted`;
  if (row.used >= w.limit) {
    throw new RateLimitedError(row.retry_after ?? 1, `Rate limit exceeded: at most ${w.limit} per ${window} seconds`, w.limit);
  }
  return { at: row.at, limit: w.limit, remaining: w.limit - row.used - 1 };
}
