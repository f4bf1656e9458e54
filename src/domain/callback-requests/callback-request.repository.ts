import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { eventCtes } from '../events/event-log.repository';

// The only module that reads or writes callback_requests, in plain SQL. Creation
// is one statement (the database function create_callback_request: lookups, the
// account's rolling window and the insert); reads are scoped to the account and
// go through toView(), the one row mapper. The creation statement writes the
// request's callback_request.created event too (docs/api.md, "Events"): callback
// requests have no audit record, and one statement keeps the rate limit exact.

export type { CallbackStatus as CallbackRequestStatus } from '../voice/callback-transitions';
import type { CallbackStatus as CallbackRequestStatus } from '../voice/callback-transitions';

/** One step of a request's history. */
export interface CallbackHistoryEntry {
  status: CallbackRequestStatus;
  agentId: bigint | null;
  /** why it moved, when there is more to say: missed, declined, rescinded, no_answer, busy, answered… */
  reason: string | null;
  at: Date;
}

export interface CallbackRequestRecord {
  id: bigint;
  accountId: bigint;
  phoneNumberId: bigint;
  requesterPhoneNumber: string;
  requestedGroupIds: bigint[];
  routedGroupIds: bigint[];
  status: CallbackRequestStatus;
  /** 1 = next in its phone number's queue; null unless queued */
  queuePosition: number | null;
  createdById: bigint | null;
  createdAt: Date;
  /** the agent offered it, dialing it, or who completed it */
  agentId: bigint | null;
  /** dial attempts made */
  attempts: number;
  updatedAt: Date | null;
  completedAt: Date | null;
}

/** A request as list and show give it: with its history and, while queued, an estimate of the wait. */
export interface CallbackRequestView extends CallbackRequestRecord {
  history: CallbackHistoryEntry[];
  /** seconds: the queue position × the mean handling time of recent callbacks ÷ the agents online; null when unknown or not queued */
  estimatedWaitTime: number | null;
}

/** What an estimate of the wait needs: the mean handling time of recent callbacks (null: none yet) and the agents online. */
interface WaitFactors {
  handleSeconds: number | null;
  agentsOnline: number;
}

/** Requests read with their history, and the account's wait factors when one of them is queued (else null). */
export interface CallbackRequestViews {
  /** estimatedWaitTime still null: the caller estimates it from `factors` */
  views: CallbackRequestView[];
  factors: WaitFactors | null;
}

/** A row of create_callback_request (callback_request_lookups gives the first two columns). */
export interface CreateRow {
  phone_found: boolean;
  found_group_ids: (string | bigint)[];
  routed_group_ids?: (string | bigint)[] | null;
  new_id?: string | bigint | null;
  decided_at?: Date | null;
  used?: number | null;
  retry_after?: number | null;
  queued_ahead?: number | null;
  /** an online agent of the account is free for an offer (routing may offer the new request at once) */
  agent_free?: boolean;
}

export interface NewCallbackRequest {
  phoneNumberId: bigint;
  requesterPhoneNumber: string;
  groupIds: bigint[];
  /** the groups that route under either setting of the account's omnichannel routing */
  routedIfOmnichannel: bigint[];
  routedOtherwise: bigint[];
  createdById: bigint;
}

export interface CallbackRequestQuery {
  phoneNumberId?: bigint;
  agentId?: bigint;
  status?: CallbackRequestStatus | null;
  size: number;
  after?: bigint;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8;
  account_id: Int8;
  phone_number_id: Int8;
  requester_phone_number: string;
  requested_group_ids: string[];
  routed_group_ids: string[];
  status: string;
  created_by_id: Int8 | null;
  created_at: Date;
  agent_id: Int8 | null;
  attempts: number;
  updated_at: Date | null;
  completed_at: Date | null;
  /** queued requests of the same phone number ahead of this one; null unless queued (withViews) */
  ahead: number | null;
}
/** A history step as the view's json_agg gives it: agent id as text (a bigint), the time as epoch milliseconds. */
interface HistoryJson {
  status: string;
  agent_id: string | null;
  reason: string | null;
  at: number;
}
interface ViewRow extends SqlRow {
  history: HistoryJson[] | null;
  /** the wait factors (the same on every row); null when no row is queued */
  handle: number | null;
  online: number | null;
}
const COLUMNS = `c.id, c.account_id, c.phone_number_id, c.requester_phone_number,
  COALESCE(c.requested_group_ids, '{}')::text[] AS requested_group_ids, COALESCE(c.routed_group_ids, '{}')::text[] AS routed_group_ids,
  c.status::text AS status, c.created_by_id, c.created_at, c.agent_id, c.attempts, c.updated_at, c.completed_at`;

/**
 * A read of some of the scope's requests (\`select\`: COLUMNS of \`c\`) as list and show give
 * them, in one statement: each queued one with the queued requests of its phone number ahead
 * of it, each with its history, and the account's wait factors when a row is queued.
 *
 * Positions: the queued requests of the rows' numbers up to the last queued row are numbered
 * in one ordered pass (index (account_id, phone_number_id, status, id)), so a page costs its
 * queue up to its last row once. (A count per row, in a statement of its own after the page,
 * read that queue again for every row: a quadratic cost in a long queue.)
 * History: a json array per row (index (account_id, callback_request_id, id)), its times as
 * epoch milliseconds, truncated as the driver truncates a timestamp's microseconds.
 * Wait factors: the mean handling time (dialing to completed) of the account's last 20
 * completed requests and the agents online, computed once (uncorrelated) and repeated on
 * each row. History and factors were two more statements after the page: a round trip and
 * ~30 % of the read's CPU in the service (bench/tuning-log.md, "The queue read").
 */
function withViews(select: string): string {
  return `WITH page AS (${select}),
  ahead AS (
    SELECT q.id, (row_number() OVER (PARTITION BY q.phone_number_id ORDER BY q.id))::int - 1 AS ahead
      FROM callback_requests q
     WHERE q.account_id = $1 AND q.status = 'queued'
       AND q.phone_number_id IN (SELECT p.phone_number_id FROM page p WHERE p.status = 'queued')
       AND q.id <= (SELECT max(p.id) FROM page p WHERE p.status = 'queued')
  ),
  factors AS (
    SELECT (SELECT avg(EXTRACT(EPOCH FROM r.completed_at - r.dialing_at))::float8 FROM (
              SELECT d.completed_at, d.dialing_at FROM callback_requests d
               WHERE d.account_id = $1 AND d.status = 'completed' AND d.dialing_at IS NOT NULL ORDER BY d.id DESC LIMIT 20) r) AS handle,
           (SELECT count(*)::int FROM agent_availabilities a JOIN users u ON u.account_id = a.account_id AND u.id = a.user_id
             WHERE a.account_id = $1 AND a.agent_state = 'online' AND u.active AND u.role IN ('agent', 'admin')) AS online
     WHERE EXISTS (SELECT 1 FROM page p WHERE p.status = 'queued')
  )
  SELECT page.*, ahead.ahead, factors.handle, factors.online,
         (SELECT json_agg(json_build_object('status', h.status::text, 'agent_id', h.agent_id::text, 'reason', h.reason,
                                            'at', floor(EXTRACT(EPOCH FROM h.at) * 1000)) ORDER BY h.id)
            FROM callback_request_history h WHERE h.account_id = $1 AND h.callback_request_id = page.id) AS history
    FROM page LEFT JOIN ahead ON ahead.id = page.id LEFT JOIN factors ON true ORDER BY page.id`;
}

function toView(r: ViewRow): CallbackRequestView {
  return {
    id: BigInt(r.id),
    accountId: BigInt(r.account_id),
    phoneNumberId: BigInt(r.phone_number_id),
    requesterPhoneNumber: r.requester_phone_number,
    requestedGroupIds: r.requested_group_ids.map(BigInt),
    routedGroupIds: r.routed_group_ids.map(BigInt),
    status: r.status as CallbackRequestStatus,
    queuePosition: r.ahead === null ? null : r.ahead + 1,
    createdById: r.created_by_id === null ? null : BigInt(r.created_by_id),
    createdAt: r.created_at,
    agentId: r.agent_id === null ? null : BigInt(r.agent_id),
    attempts: r.attempts,
    updatedAt: r.updated_at,
    completedAt: r.completed_at,
    history: r.history === null ? [] : r.history.map(toStep),
    estimatedWaitTime: null,
  };
}

function toStep(h: HistoryJson): CallbackHistoryEntry {
  return { status: h.status as CallbackRequestStatus, agentId: h.agent_id === null ? null : BigInt(h.agent_id), reason: h.reason, at: new Date(h.at) };
}

function views(rows: ViewRow[]): CallbackRequestViews {
  const first = rows[0];
  const factors = first && first.online !== null ? { handleSeconds: first.handle === null ? null : Number(first.handle), agentsOnline: first.online } : null;
  return { views: rows.map(toView), factors };
}

/** The event's detail: the request as GraphQL's CallbackRequest shows it, snake_case (create's parameters and CTE `stored`). */
const CREATED_DETAIL =
  "jsonb_build_object('id', stored.new_id, 'phone_number_id', $2::bigint, 'requester_phone_number', $3::text, 'requested_group_ids', $4::bigint[], " +
  "'routed_group_ids', stored.routed_group_ids, 'status', 'queued', 'queue_position', stored.queued_ahead + 1, 'created_by_id', $7::bigint, " +
  `'created_at', to_char(stored.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))`;

export class CallbackRequestRepository {
  constructor(private readonly db: TenantSql) {}

  /** Checks the ids, spends a slot of the window and stores the request; no row: no such account. */
  async create(scope: AccountScope, input: NewCallbackRequest, window: { bucket: string; limit: number; seconds: number }): Promise<CreateRow | undefined> {
    const ids = (list: bigint[]) => list.map(String);
    const [row] = await this.db.query<CreateRow>(
      scope,
      `WITH made AS (
         SELECT * FROM create_callback_request($1::bigint, $2::bigint, $3::text, $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint, $8::text, $9::int, $10::int)
       ), stored AS (SELECT * FROM made WHERE made.new_id IS NOT NULL),
       ${eventCtes('created_event', 'stored', 'callback_request.created', 'callback_request', { accountId: '$1::bigint', subjectId: 'stored.new_id', detail: CREATED_DETAIL })}
       SELECT made.*, EXISTS (
         SELECT 1 FROM agent_availabilities a
          WHERE a.account_id = $1 AND a.agent_state = 'online' AND a.call_status IS NULL AND a.offered_request_id IS NULL
       ) AS agent_free FROM made`,
      [
        String(input.phoneNumberId), input.requesterPhoneNumber, ids(input.groupIds), ids(input.routedIfOmnichannel),
        ids(input.routedOtherwise), String(input.createdById), window.bucket, window.limit, window.seconds,
      ],
    );
    return row;
  }

  /** Only the lookups of create (for a request with shape errors, so that its 422 lists every problem). */
  async lookups(scope: AccountScope, phoneNumberId: bigint | undefined, groupIds: bigint[]): Promise<CreateRow | undefined> {
    const [row] = await this.db.query<CreateRow>(scope, 'SELECT * FROM callback_request_lookups($1::bigint, $2::bigint, $3::bigint[])', [
      phoneNumberId === undefined ? null : String(phoneNumberId),
      groupIds.map(String),
    ]);
    return row;
  }

  /**
   * A page of the scope's requests, id ascending (queue order), with their history and the wait
   * factors (one statement), and the filter's total (counted when asked for: REST's pages do not show it).
   */
  async list(scope: AccountScope, query: CallbackRequestQuery): Promise<CallbackRequestViews & { hasNextPage: boolean; count: () => Promise<number> }> {
    // parameters after the account's ($1, bound by TenantSql): $2, $3, …
    const filter: unknown[] = [];
    let where = 'c.account_id = $1';
    if (query.phoneNumberId !== undefined) {
      filter.push(String(query.phoneNumberId));
      where += ` AND c.phone_number_id = $${filter.length + 1}`;
    }
    if (query.agentId !== undefined) {
      filter.push(String(query.agentId));
      where += ` AND c.agent_id = $${filter.length + 1}`;
    }
    if (query.status) {
      filter.push(query.status);
      where += ` AND c.status = $${filter.length + 1}::"CallbackRequestStatus"`;
    }
    const paging = [...filter];
    let pageWhere = where;
    if (query.after !== undefined) {
      paging.push(String(query.after));
      pageWhere += ` AND c.id > $${paging.length + 1}`;
    }
    paging.push(query.size + 1);
    const rows = await this.db.query<ViewRow>(
      scope, withViews(`SELECT ${COLUMNS} FROM callback_requests c WHERE ${pageWhere} ORDER BY c.id LIMIT $${paging.length + 1}`), paging,
    );
    const count = async () => Number((await this.db.query<{ n: Int8 }>(scope, `SELECT count(*) AS n FROM callback_requests c WHERE ${where}`, filter))[0].n);
    return { ...views(rows.slice(0, query.size)), hasNextPage: rows.length > query.size, count };
  }

  /** A request of the scope, with its queue position, history and the wait factors (one statement); no view when there is none. */
  async find(scope: AccountScope, id: bigint): Promise<CallbackRequestViews> {
    return views(await this.db.query<ViewRow>(scope, withViews(`SELECT ${COLUMNS} FROM callback_requests c WHERE c.account_id = $1 AND c.id = $2`), [String(id)]));
  }

  /**
   * The open requests of a phone number of the scope (deleting the number cancels them
   * through the lifecycle, one transition each).
   */
  async openOfPhoneNumber(scope: AccountScope, phoneNumberId: bigint): Promise<bigint[]> {
    const rows = await this.db.query<{ id: Int8 }>(
      scope,
      `SELECT c.id FROM callback_requests c
        WHERE c.account_id = $1 AND c.phone_number_id = $2 AND c.status IN ('queued', 'offered', 'accepted', 'dialing') ORDER BY c.id`,
      [String(phoneNumberId)],
    );
    return rows.map((r) => BigInt(r.id));
  }
}
