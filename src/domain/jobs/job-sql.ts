// SQL text of the jobs table shared by the statements that write jobs: the job
// repository's, and those that make rows and their jobs in one statement.

export const INSERT_COLUMNS = 'INSERT INTO jobs (account_id, kind, key, payload, run_at, max_attempts) ';

/**
 * For a statement that makes rows and their jobs at once: CTE text inserting, for each
 * row of CTE `from` (columns account_id and id), a job of kind $<kind>, keyed by the
 * row's id, payload {<$payloadKey>: id}, due now, at most $<maxAttempts> attempts; and
 * the SELECT that counts `from`'s rows and wakes the engines (as enqueue does).
 */
export function jobPerRowSql(from: string, p: { kind: number; payloadKey: number; maxAttempts: number }): { cte: string; select: string } {
  return {
    cte:
      `j AS (${INSERT_COLUMNS}SELECT ${from}.account_id, $${p.kind}, ${from}.id::text, jsonb_build_object($${p.payloadKey}::text, ${from}.id::text), statement_timestamp(), $${p.maxAttempts}::int ` +
      `FROM ${from} ON CONFLICT (kind, key) DO NOTHING RETURNING run_at)`,
    select: `SELECT (SELECT count(*)::int FROM ${from}) AS n, (SELECT pg_notify('jobs', '') FROM j LIMIT 1) AS notified`,
  };
}
