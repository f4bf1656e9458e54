import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { keysetPageOf, type KeysetPage, type PageResult } from '../pagination';
import { jobPerRowSql } from '../jobs/job-sql';

// The only module that reads or writes webhook invocations (one event sent to one
// webhook) and their attempts (one HTTP request each), and the webhooks' delivery state
// (the circuit breaker's columns). docs/api.md, "Webhook deliveries".

export type InvocationStatus = 'pending' | 'retrying' | 'success' | 'failed';
export const INVOCATION_STATUSES: readonly InvocationStatus[] = ['pending', 'retrying', 'success', 'failed'];

export interface InvocationRecord {
  id: bigint;
  accountId: bigint;
  webhookId: bigint;
  eventId: string;
  eventType: string;
  status: InvocationStatus;
  attempts: number;
  reason: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

export interface AttemptRecord {
  id: bigint;
  invocationId: bigint;
  startedAt: Date;
  durationMs: number;
  /** null: no answer */
  statusCode: number | null;
  error: string | null;
  /** the first KB of the answer's body */
  response: string | null;
}

/** What a delivery needs: the invocation, and its webhook as it is now (null fields when the webhook is gone). */
export interface DeliveryTarget {
  invocation: InvocationRecord;
  webhook: {
    id: bigint; name: string; status: string; endpoint: string; httpMethod: string; requestFormat: string; sealedSecret: string;
    consecutiveFailures: number; failingSince: Date | null; pausedUntil: Date | null;
  } | null;
}

export interface InvocationFilter {
  status?: InvocationStatus;
  eventType?: string;
}

type Int8 = string | number | bigint;
interface InvocationRow {
  id: Int8; account_id: Int8; webhook_id: Int8; event_id: string; event_type: string; status: InvocationStatus; attempts: number; reason: string | null;
  created_at: Date; updated_at: Date; completed_at: Date | null;
}
interface AttemptRow { id: Int8; invocation_id: Int8; started_at: Date; duration_ms: number; status_code: number | null; error: string | null; response: string | null }

const COLUMNS = 'i.id, i.account_id, i.webhook_id, i.event_id, i.event_type, i.status, i.attempts, i.reason, i.created_at, i.updated_at, i.completed_at';
const ATTEMPT_COLUMNS = 'a.id, a.invocation_id, a.started_at, a.duration_ms, a.status_code, a.error, a.response';

function toRecord(r: InvocationRow): InvocationRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), webhookId: BigInt(r.webhook_id), eventId: r.event_id, eventType: r.event_type, status: r.status,
    attempts: r.attempts, reason: r.reason, createdAt: r.created_at, updatedAt: r.updated_at, completedAt: r.completed_at,
  };
}

function toAttempt(r: AttemptRow): AttemptRecord {
  return { id: BigInt(r.id), invocationId: BigInt(r.invocation_id), startedAt: r.started_at, durationMs: r.duration_ms, statusCode: r.status_code, error: r.error, response: r.response };
}

/** The WHERE (alias i) of a webhook's invocations of the filter; its parameters are appended (they are $2, $3, …). */
function filterSql(webhookId: bigint, filter: InvocationFilter, params: unknown[]): string {
  params.push(String(webhookId));
  let where = 'i.account_id = $1 AND i.webhook_id = $2';
  if (filter.status !== undefined) {
    params.push(filter.status);
    where += ` AND i.status = $${params.length + 1}`;
  }
  if (filter.eventType !== undefined) {
    params.push(filter.eventType);
    where += ` AND i.event_type = $${params.length + 1}`;
  }
  return where;
}

export class WebhookInvocationRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * An invocation for every active webhook of the account subscribed to the type of the
   * account's event; the ids of those it created (none for a webhook that has one for
   * this event already: a fan-out that runs twice adds nothing).
   */
  async fanOut(scope: AccountScope, eventId: string, delivery: { kind: string; maxAttempts: number }): Promise<number> {
    const jobs = jobPerRowSql('inv', { kind: 3, payloadKey: 4, maxAttempts: 5 });
    const [row] = await this.db.query<{ n: number }>(
      scope,
      `WITH inv AS (INSERT INTO webhook_invocations (account_id, webhook_id, event_id, event_type, status)
         SELECT w.account_id, w.id, e.id, e.type, 'pending' FROM events e JOIN webhooks w ON w.account_id = $1 AND w.status = 'active' AND e.type = ANY(w.subscriptions)
          WHERE e.account_id = $1 AND e.id = $2::uuid
         ORDER BY w.id
         ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id, account_id),
       ${jobs.cte}
       ${jobs.select}`,
      [eventId, delivery.kind, 'invocation_id', delivery.maxAttempts],
    );
    return row.n;
  }

  /** An invocation of the account's webhook outside the fan-out (its test sends); null when the scope has no such webhook. */
  async insertTest(scope: AccountScope, webhookId: bigint, eventId: string, eventType: string): Promise<bigint | null> {
    const [row] = await this.db.query<{ id: Int8 }>(
      scope,
      `INSERT INTO webhook_invocations (account_id, webhook_id, event_id, event_type, status)
       SELECT w.account_id, w.id, $3::uuid, $4, 'pending' FROM webhooks w WHERE w.account_id = $1 AND w.id = $2 RETURNING id`,
      [String(webhookId), eventId, eventType],
    );
    return row ? BigInt(row.id) : null;
  }

  async find(scope: AccountScope, webhookId: bigint, id: bigint): Promise<InvocationRecord | null> {
    const [row] = await this.db.query<InvocationRow>(scope, `SELECT ${COLUMNS} FROM webhook_invocations i WHERE i.account_id = $1 AND i.webhook_id = $2 AND i.id = $3`, [
      String(webhookId),
      String(id),
    ]);
    return row ? toRecord(row) : null;
  }

  /** The invocation and its webhook (null when deleted): what a delivery reads first. */
  async target(scope: AccountScope, id: bigint): Promise<DeliveryTarget | null> {
    const [row] = await this.db.query<InvocationRow & {
      w_id: Int8 | null; w_name: string; w_status: string; endpoint: string; http_method: string; request_format: string; signing_secret: string;
      consecutive_failures: number; failing_since: Date | null; paused_until: Date | null;
    }>(
      scope,
      `SELECT ${COLUMNS}, w.id AS w_id, w.name AS w_name, w.status AS w_status, w.endpoint, w.http_method, w.request_format, w.signing_secret,
              w.consecutive_failures, w.failing_since, w.paused_until
         FROM webhook_invocations i LEFT JOIN webhooks w ON w.account_id = $1 AND w.id = i.webhook_id
        WHERE i.account_id = $1 AND i.id = $2`,
      [String(id)],
    );
    if (!row) return null;
    return {
      invocation: toRecord(row),
      webhook:
        row.w_id === null
          ? null
          : {
              id: BigInt(row.w_id), name: row.w_name, status: row.w_status, endpoint: row.endpoint, httpMethod: row.http_method, requestFormat: row.request_format,
              sealedSecret: row.signing_secret, consecutiveFailures: row.consecutive_failures, failingSince: row.failing_since, pausedUntil: row.paused_until,
            },
    };
  }

  /** Records one attempt and the invocation's new status (completed_at set when it is final). */
  async recordAttempt(
    scope: AccountScope, id: bigint, attempt: Omit<AttemptRecord, 'id' | 'invocationId'>, status: InvocationStatus, reason: string | null,
    /** a delivered attempt: this webhook's breaker is healthy again, in the same statement (written only when it was not) */
    healthy?: { webhookId: bigint },
  ): Promise<boolean> {
    const params = [String(id), attempt.startedAt, attempt.durationMs, attempt.statusCode, attempt.error?.slice(0, 2000) ?? null, attempt.response, status, reason];
    const breaker = healthy
      ? `, w AS (UPDATE webhooks w SET consecutive_failures = 0, failing_since = NULL, paused_until = NULL
                  WHERE w.account_id = $1 AND w.id = $10 AND (w.consecutive_failures <> 0 OR w.failing_since IS NOT NULL OR w.paused_until IS NOT NULL))`
      : '';
    const rows = await this.db.query(
      scope,
      `WITH a AS (INSERT INTO webhook_invocation_attempts (account_id, invocation_id, started_at, duration_ms, status_code, error, response)
                  SELECT i.account_id, i.id, $3, $4, $5, $6, $7 FROM webhook_invocations i WHERE i.account_id = $1 AND i.id = $2 RETURNING invocation_id),
            u AS (UPDATE webhook_invocations i SET attempts = i.attempts + 1, status = $8, reason = $9, updated_at = now(),
                         completed_at = CASE WHEN $8 IN ('success', 'failed') THEN now() END
                   FROM a WHERE i.account_id = $1 AND i.id = a.invocation_id RETURNING i.id)${breaker}
       SELECT id FROM u`,
      healthy ? [...params, String(healthy.webhookId)] : params,
    );
    return rows.length === 1;
  }

  /** Ends an invocation without an attempt (its webhook deactivated or deleted). */
  async fail(scope: AccountScope, id: bigint, reason: string): Promise<boolean> {
    const rows = await this.db.query(
      scope,
      `UPDATE webhook_invocations i SET status = 'failed', reason = $3, updated_at = now(), completed_at = now()
        WHERE i.account_id = $1 AND i.id = $2 AND i.status IN ('pending', 'retrying') RETURNING i.id`,
      [String(id), reason],
    );
    return rows.length === 1;
  }

  /** The webhook's circuit-breaker columns, its row locked until the transaction ends (concurrent deliveries count one after another); null when gone. */
  async lockBreaker(scope: AccountScope, webhookId: bigint): Promise<{ consecutiveFailures: number; failingSince: Date | null; openUntil: Date | null } | null> {
    const [row] = await this.db.query<{ consecutive_failures: number; failing_since: Date | null; paused_until: Date | null }>(
      scope,
      'SELECT w.consecutive_failures, w.failing_since, w.paused_until FROM webhooks w WHERE w.account_id = $1 AND w.id = $2 FOR UPDATE',
      [String(webhookId)],
    );
    return row ? { consecutiveFailures: row.consecutive_failures, failingSince: row.failing_since, openUntil: row.paused_until } : null;
  }

  /**
   * The half-open breaker's one probe: moves a passed paused_until to `until`; true for
   * the one delivery that did it, false for those that found it moved (the row lock
   * makes a concurrent one re-read it) or the webhook not paused.
   */
  async takeProbe(scope: AccountScope, webhookId: bigint, until: Date): Promise<boolean> {
    const rows = await this.db.query(scope, 'UPDATE webhooks w SET paused_until = $3 WHERE w.account_id = $1 AND w.id = $2 AND w.paused_until <= now() RETURNING w.id', [
      String(webhookId),
      until,
    ]);
    return rows.length === 1;
  }

  /** The webhook's circuit-breaker columns; its status inactive with the reason when `deactivate` is given. */
  async saveBreaker(
    scope: AccountScope,
    webhookId: bigint,
    state: { consecutiveFailures: number; failingSince: Date | null; openUntil: Date | null },
    deactivate?: string,
  ): Promise<boolean> {
    const rows = await this.db.query(
      scope,
      `UPDATE webhooks w SET consecutive_failures = $3, failing_since = $4, paused_until = $5,
              status = CASE WHEN $6::text IS NULL THEN w.status ELSE 'inactive' END,
              deactivated_reason = CASE WHEN $6::text IS NULL THEN w.deactivated_reason ELSE $6::text END
        WHERE w.account_id = $1 AND w.id = $2 RETURNING w.id`,
      [String(webhookId), state.consecutiveFailures, state.failingSince, state.openUntil, deactivate ?? null],
    );
    return rows.length === 1;
  }

  /** The webhook's invocations of the filter, id ascending (oldest first), a keyset page forward (after) or backward (before). */
  async listKeyset(scope: AccountScope, webhookId: bigint, filter: InvocationFilter, page: KeysetPage): Promise<PageResult<InvocationRecord>> {
    const backward = page.before !== undefined;
    const params: unknown[] = [];
    let where = filterSql(webhookId, filter, params);
    if (backward || page.after !== undefined) {
      params.push(String(backward ? page.before : page.after));
      where += ` AND i.id ${backward ? '<' : '>'} $${params.length + 1}`;
    }
    params.push(page.size + 1);
    const rows = await this.db.query<InvocationRow>(
      scope,
      `SELECT ${COLUMNS} FROM webhook_invocations i WHERE ${where} ORDER BY i.id ${backward ? 'DESC' : 'ASC'} LIMIT $${params.length + 1}`,
      params,
    );
    return keysetPageOf(rows, page, backward, toRecord);
  }

  async count(scope: AccountScope, webhookId: bigint, filter: InvocationFilter = {}): Promise<number> {
    const params: unknown[] = [];
    const [row] = await this.db.query<{ n: Int8 }>(scope, `SELECT count(*) AS n FROM webhook_invocations i WHERE ${filterSql(webhookId, filter, params)}`, params);
    return Number(row.n);
  }

  /** The attempts of an invocation of the scope, oldest first. */
  async attempts(scope: AccountScope, invocationId: bigint): Promise<AttemptRecord[]> {
    const rows = await this.db.query<AttemptRow>(
      scope,
      `SELECT ${ATTEMPT_COLUMNS} FROM webhook_invocation_attempts a WHERE a.account_id = $1 AND a.invocation_id = $2 ORDER BY a.id`,
      [String(invocationId)],
    );
    return rows.map(toAttempt);
  }
}
