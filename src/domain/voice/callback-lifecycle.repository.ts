import type { TenantSql } from '../../db/tenant-sql';
import { ADVISORY_LOCKS } from '../../db/advisory-locks';
import type { AccountScope } from '../authorization';
import type { CallbackStatus } from './callback-transitions';
import type { QueuedRequest, RoutableAgent } from './routing';

// The only module that writes the callback lifecycle: callback requests' lifecycle
// columns and history, and agents' availability rows. Every statement runs on the
// transaction of a lifecycle decision, which first takes the account's lifecycle lock
// (lockAccount): decisions of one account are made one at a time across processes,
// so that no agent ever holds two offers and no request is offered to two agents.
// Times are statement_timestamp(), never now(): now() is when the transaction began,
// before it waited for the lock, so a decision made after another could be stamped
// before it (a request's history going back in time, an offer shortened by the wait).
// The service's and the availability service's SQL follows the same rule.

type Int8 = string | number | bigint;

/** A callback request's lifecycle, as a decision reads it. */
export interface LifecycleRow {
  id: bigint;
  accountId: bigint;
  status: CallbackStatus;
  phoneNumberId: bigint;
  phoneNumber: string;
  requesterPhoneNumber: string;
  requestedGroupIds: bigint[];
  routedGroupIds: bigint[];
  agentId: bigint | null;
  attempts: number;
  offerSeq: number;
  createdById: bigint | null;
  createdAt: Date;
  updatedAt: Date | null;
  dialingAt: Date | null;
  completedAt: Date | null;
}

interface LifecycleSqlRow {
  id: Int8; account_id: Int8; status: string; phone_number_id: Int8; phone_number: string; requester_phone_number: string;
  requested_group_ids: string[]; routed_group_ids: string[]; agent_id: Int8 | null; attempts: number; offer_seq: number;
  created_by_id: Int8 | null; created_at: Date; updated_at: Date | null; dialing_at: Date | null; completed_at: Date | null;
}

const LIFECYCLE_COLUMNS = `c.id, c.account_id, c.status::text AS status, c.phone_number_id,
  (SELECT p.number FROM voice_phone_numbers p WHERE p.account_id = c.account_id AND p.id = c.phone_number_id) AS phone_number,
  c.requester_phone_number, COALESCE(c.requested_group_ids, '{}')::text[] AS requested_group_ids,
  COALESCE(c.routed_group_ids, '{}')::text[] AS routed_group_ids, c.agent_id, c.attempts, c.offer_seq, c.created_by_id,
  c.created_at, c.updated_at, c.dialing_at, c.completed_at`;

const big = (v: Int8 | null) => (v === null ? null : BigInt(v));

function toLifecycle(r: LifecycleSqlRow): LifecycleRow {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), status: r.status as CallbackStatus, phoneNumberId: BigInt(r.phone_number_id),
    phoneNumber: r.phone_number, requesterPhoneNumber: r.requester_phone_number, requestedGroupIds: r.requested_group_ids.map(BigInt),
    routedGroupIds: r.routed_group_ids.map(BigInt), agentId: big(r.agent_id), attempts: r.attempts, offerSeq: r.offer_seq,
    createdById: big(r.created_by_id), createdAt: r.created_at, updatedAt: r.updated_at, dialingAt: r.dialing_at, completedAt: r.completed_at,
  };
}

/** The account's lifecycle settings (seconds). */
export interface LifecycleSettings {
  offerTimeout: number;
  retryDelay: number;
  maxAttempts: number;
  wrapUpTime: number;
}

export type AgentState = 'online' | 'offline' | 'away' | 'transfers_only';
export type AgentCallStatus = 'on_call' | 'wrap_up';

/** An agent's availability row; an agent without one is offline. */
export interface AvailabilityRow {
  userId: bigint;
  agentState: AgentState;
  callStatus: AgentCallStatus | null;
  via: 'client' | 'phone' | null;
  idleSince: Date | null;
  onlineSince: Date | null;
  availableSeconds: number;
  offeredRequestId: bigint | null;
  wrapUpSeq: number;
  callsAccepted: number;
  callsMissed: number;
  callbacksCompleted: number;
  talkSeconds: number;
}

interface AvailabilitySqlRow {
  user_id: Int8; agent_state: string; call_status: string | null; via: string | null; idle_since: Date | null; online_since: Date | null;
  available_seconds: number; offered_request_id: Int8 | null; wrap_up_seq: number; calls_accepted: number; calls_missed: number;
  callbacks_completed: number; talk_seconds: number;
}

const AVAILABILITY_COLUMNS = `a.user_id, a.agent_state::text AS agent_state, a.call_status::text AS call_status, a.via, a.idle_since, a.online_since,
  a.available_seconds, a.offered_request_id, a.wrap_up_seq, a.calls_accepted, a.calls_missed, a.callbacks_completed, a.talk_seconds`;

function toAvailability(r: AvailabilitySqlRow): AvailabilityRow {
  return {
    userId: BigInt(r.user_id), agentState: r.agent_state as AgentState, callStatus: r.call_status as AgentCallStatus | null,
    via: r.via as AvailabilityRow['via'], idleSince: r.idle_since, onlineSince: r.online_since, availableSeconds: Number(r.available_seconds),
    offeredRequestId: big(r.offered_request_id), wrapUpSeq: r.wrap_up_seq, callsAccepted: r.calls_accepted, callsMissed: r.calls_missed,
    callbacksCompleted: r.callbacks_completed, talkSeconds: Number(r.talk_seconds),
  };
}

/**
 * A change of a request's lifecycle columns: fixed SQL text (`sets`, reading parameters
 * from $5 on: `params`), never values.
 */
export interface RequestChange {
  sets?: string;
  params?: unknown[];
  /** the history row's agent and reason */
  historyAgentId: bigint | null;
  reason: string | null;
}

/** A change of an agent's availability row: fixed SQL text reading parameters from $3 on. */
export interface AgentChange {
  sets: string;
  params?: unknown[];
}

export class CallbackLifecycleRepository {
  constructor(private readonly db: TenantSql) {}

  /** Takes the account's lifecycle lock until the transaction ends; the account it locked. */
  async lockAccount(scope: AccountScope): Promise<bigint> {
    const [row] = await this.db.query<{ account_id: Int8 }>(
      scope,
      `SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.callbackLifecycle}, hashtext($1::text)) AS locked, $1::bigint AS account_id`,
    );
    return BigInt(row.account_id);
  }

  async settings(scope: AccountScope): Promise<LifecycleSettings | null> {
    const [row] = await this.db.query<{ o: number; r: number; m: number; w: number }>(
      scope,
      'SELECT callback_offer_timeout AS o, callback_retry_delay AS r, callback_max_attempts AS m, wrap_up_time AS w FROM accounts WHERE id = $1',
    );
    return row ? { offerTimeout: row.o, retryDelay: row.r, maxAttempts: row.m, wrapUpTime: row.w } : null;
  }

  async find(scope: AccountScope, id: bigint, lock = false): Promise<LifecycleRow | null> {
    const [row] = await this.db.query<LifecycleSqlRow>(
      scope,
      `SELECT ${LIFECYCLE_COLUMNS} FROM callback_requests c WHERE c.account_id = $1 AND c.id = $2${lock ? ' FOR UPDATE' : ''}`,
      [String(id)],
    );
    return row ? toLifecycle(row) : null;
  }

  /**
   * Moves a request from one of `from` to `to`, with the change's columns, and writes its
   * history row; null when it was not in one of `from` (the caller decided under the lock,
   * so this is a guard, not a race).
   */
  async move(scope: AccountScope, id: bigint, from: readonly CallbackStatus[], to: CallbackStatus, change: RequestChange): Promise<LifecycleRow | null> {
    const [row] = await this.db.query<LifecycleSqlRow>(
      scope,
      `WITH moved AS (
         UPDATE callback_requests c SET status = $3::"CallbackRequestStatus", updated_at = statement_timestamp()${change.sets ? `, ${change.sets}` : ''}
          WHERE c.account_id = $1 AND c.id = $2 AND c.status::text = ANY($4::text[])
         RETURNING c.*
       ), history AS (
         INSERT INTO callback_request_history (account_id, callback_request_id, status, agent_id, reason, at)
         SELECT m.account_id, m.id, m.status, $${5 + (change.params?.length ?? 0)}::bigint, $${6 + (change.params?.length ?? 0)}::text, m.updated_at FROM moved m
       )
       SELECT ${LIFECYCLE_COLUMNS} FROM moved c`,
      [String(id), to, [...from], ...(change.params ?? []), change.historyAgentId === null ? null : String(change.historyAgentId), change.reason],
    );
    return row ? toLifecycle(row) : null;
  }

  /** The account's queued requests that may be routed now (no retry pending), in queue order. */
  async routable(scope: AccountScope, limit: number): Promise<QueuedRequest[]> {
    const rows = await this.db.query<{ id: Int8; routed_group_ids: string[]; offered_agent_ids: string[] }>(
      scope,
      `SELECT c.id, COALESCE(c.routed_group_ids, '{}')::text[] AS routed_group_ids, COALESCE(c.offered_agent_ids, '{}')::text[] AS offered_agent_ids
         FROM callback_requests c
        WHERE c.account_id = $1 AND c.status = 'queued' AND (c.retry_at IS NULL OR c.retry_at <= statement_timestamp())
        ORDER BY c.id LIMIT $2`,
      [limit],
    );
    return rows.map((r) => ({ id: BigInt(r.id), routedGroupIds: r.routed_group_ids.map(BigInt), offeredAgentIds: r.offered_agent_ids.map(BigInt) }));
  }

  /** The account's online agents (active agents and admins), with their groups and whether they are free for an offer. */
  async onlineAgents(scope: AccountScope): Promise<RoutableAgent[]> {
    const rows = await this.db.query<{ user_id: Int8; free: boolean; idle_since: Date | null; group_ids: string[] }>(
      scope,
      `SELECT a.user_id, (a.call_status IS NULL AND a.offered_request_id IS NULL) AS free, a.idle_since,
              COALESCE((SELECT array_agg(m.group_id) FROM group_memberships m WHERE m.account_id = a.account_id AND m.user_id = a.user_id), '{}')::text[] AS group_ids
         FROM agent_availabilities a
         JOIN users u ON u.account_id = a.account_id AND u.id = a.user_id
        WHERE a.account_id = $1 AND a.agent_state = 'online' AND u.active AND u.role IN ('agent', 'admin')`,
    );
    return rows.map((r) => ({ id: BigInt(r.user_id), free: r.free, idleSince: r.idle_since, groupIds: r.group_ids.map(BigInt) }));
  }

  /** Whether the account has a free online agent and a routable request: a cheap look before taking the lock. */
  async mayRoute(scope: AccountScope): Promise<boolean> {
    const [row] = await this.db.query<{ yes: boolean }>(
      scope,
      `SELECT EXISTS (SELECT 1 FROM agent_availabilities a WHERE a.account_id = $1 AND a.agent_state = 'online' AND a.call_status IS NULL AND a.offered_request_id IS NULL)
          AND EXISTS (SELECT 1 FROM callback_requests c WHERE c.account_id = $1 AND c.status = 'queued' AND (c.retry_at IS NULL OR c.retry_at <= statement_timestamp())) AS yes`,
    );
    return row.yes;
  }

  /** The agent's availability row, locked (the decision changes it); null: no row yet (offline). */
  async availability(scope: AccountScope, userId: bigint, lock = false): Promise<AvailabilityRow | null> {
    const [row] = await this.db.query<AvailabilitySqlRow>(
      scope,
      `SELECT ${AVAILABILITY_COLUMNS} FROM agent_availabilities a WHERE a.account_id = $1 AND a.user_id = $2${lock ? ' FOR UPDATE' : ''}`,
      [String(userId)],
    );
    return row ? toAvailability(row) : null;
  }

  /** Availability rows of these agents (missing ones are offline). */
  async availabilities(scope: AccountScope, userIds: readonly bigint[]): Promise<AvailabilityRow[]> {
    const rows = await this.db.query<AvailabilitySqlRow>(
      scope,
      `SELECT ${AVAILABILITY_COLUMNS} FROM agent_availabilities a WHERE a.account_id = $1 AND a.user_id = ANY($2::bigint[])`,
      [userIds.map(String)],
    );
    return rows.map(toAvailability);
  }

  /** The agent's row, locked, made (offline) when missing; null when the scope's account has no such user. */
  async ensureAvailability(scope: AccountScope, userId: bigint): Promise<AvailabilityRow | null> {
    await this.db.query(
      scope,
      `INSERT INTO agent_availabilities (account_id, user_id) SELECT u.account_id, u.id FROM users u WHERE u.account_id = $1 AND u.id = $2
       ON CONFLICT (account_id, user_id) DO NOTHING`,
      [String(userId)],
    );
    return this.availability(scope, userId, true);
  }

  async changeAgent(scope: AccountScope, userId: bigint, change: AgentChange): Promise<AvailabilityRow | null> {
    const [row] = await this.db.query<AvailabilitySqlRow>(
      scope,
      `UPDATE agent_availabilities a SET ${change.sets}, updated_at = statement_timestamp() WHERE a.account_id = $1 AND a.user_id = $2 RETURNING ${AVAILABILITY_COLUMNS}`,
      [String(userId), ...(change.params ?? [])],
    );
    return row ? toAvailability(row) : null;
  }

  /** Who an agent is, for the dialing event (the telephony integration rings them). */
  async agentContact(scope: AccountScope, userId: bigint): Promise<{ id: number; name: string; email: string } | null> {
    const [row] = await this.db.query<{ id: Int8; name: string; email: string }>(scope, 'SELECT u.id, u.name, u.email FROM users u WHERE u.account_id = $1 AND u.id = $2', [String(userId)]);
    return row ? { id: Number(row.id), name: row.name, email: row.email } : null;
  }

  /** Whether the user is an active agent or admin of the scope's account (they have an availability). */
  async isAgent(scope: AccountScope, userId: bigint): Promise<boolean> {
    const [row] = await this.db.query<{ yes: boolean }>(
      scope,
      "SELECT EXISTS (SELECT 1 FROM users u WHERE u.account_id = $1 AND u.id = $2 AND u.active AND u.role IN ('agent', 'admin')) AS yes",
      [String(userId)],
    );
    return row.yes;
  }

  /** Accounts with a free online agent and a routable queued request: the job engine's safety-net sweep, over every account. */
  async routableAccounts(): Promise<bigint[]> {
    const rows = await this.db.crossTenant<{ account_id: Int8 }>(
      'jobEngine',
      `SELECT DISTINCT a.account_id FROM agent_availabilities a
        WHERE a.agent_state = 'online' AND a.call_status IS NULL AND a.offered_request_id IS NULL
          AND EXISTS (SELECT 1 FROM callback_requests c WHERE c.account_id = a.account_id AND c.status = 'queued' AND (c.retry_at IS NULL OR c.retry_at <= statement_timestamp()))
        LIMIT 1000`,
    );
    return rows.map((r) => BigInt(r.account_id));
  }
}
