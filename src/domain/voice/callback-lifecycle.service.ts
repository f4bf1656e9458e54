import { tenantTransaction, type TenantSql } from '../../db/tenant-sql';
import { actorOf, recordAudit, systemActor, type AuditActor } from '../audit/audit-log.repository';
import { accountScope, type AccountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import { ConflictError, ForbiddenError, NotFoundError, Validator } from '../errors';
import { parseId } from '../ids';
import type { RepositoryFactory, Transactions } from '../repositories';
import type { CallbackLifecycleRepository, LifecycleRow, LifecycleSettings } from './callback-lifecycle.repository';
import { CALL_OUTCOMES, outcomeAction, transition, type CallbackAction, type CallOutcome } from './callback-transitions';
import { route } from './routing';
import { availabilityDetail, callbackDetail } from './voice-details';

// The callback lifecycle (docs/api.md, "The callback lifecycle"): every decision is one
// transaction that takes the account's lifecycle lock, reads what it decides on, and
// writes the request, its history, the audit record, the event and the timers it needs
// (jobs: an offer's expiry, a retry, the end of a wrap-up), so that a decision and its
// traces commit together or not at all, in whichever process makes it.

/** The job kinds of the lifecycle (run by src/jobs/callback-lifecycle.ts). */
export const LIFECYCLE_JOBS = {
  /** payload {request_id, offer_seq}: the offer is missed if still pending */
  offerExpired: 'callback.offer_expired',
  /** a request's retry came due: route the account */
  retryDue: 'callback.retry_due',
  /** payload {user_id, wrap_up_seq}: the agent's wrap-up is over */
  wrapUpEnded: 'agent.wrap_up_ended',
  /** recurring, system: route every account with a free agent and a routable request (a safety net; triggers do the work) */
  sweep: 'callback.sweep',
} as const;

/** Routing reads at most this many queued requests per decision (queue order). */
const ROUTING_WINDOW = 500;

/** One decision's tools: the transaction's repositories, the scope, who acts. */
interface Decision {
  sql: TenantSql;
  lifecycle: CallbackLifecycleRepository;
  scope: AccountScope;
  actor: AuditActor;
  settings: LifecycleSettings;
}

const SYSTEM = { via: 'system' } as const;

export class CallbackLifecycleService {
  constructor(
    private readonly db: Transactions,
    private readonly lifecycle: CallbackLifecycleRepository,
    private readonly repos: RepositoryFactory,
  ) {}

  /** Runs `fn` as one decision of the account: its transaction, under its lifecycle lock. */
  decide<T>(scope: AccountScope, actor: AuditActor, fn: (d: Decision) => Promise<T>): Promise<T> {
    return tenantTransaction(this.db, (sql) => this.decideOn(sql, scope, actor, fn));
  }

  /** A decision on the caller's transaction (a change that also moves requests, e.g. deleting a phone number). */
  async decideOn<T>(sql: TenantSql, scope: AccountScope, actor: AuditActor, fn: (d: Decision) => Promise<T>): Promise<T> {
    const lifecycle = this.repos(sql).lifecycle;
    await lifecycle.lockAccount(scope);
    const settings = (await lifecycle.settings(scope)) ?? notFound();
    return fn({ sql, lifecycle, scope, actor, settings });
  }

  /** Cancels the open requests of a phone number being deleted, in the deletion's transaction; how many. */
  cancelOpenOfPhoneNumber(sql: TenantSql, actor: AuditActor, phoneNumberId: bigint): Promise<number> {
    const scope = { accountId: actor.accountId };
    return this.decideOn(sql, scope, actor, async (d) => {
      const ids = await this.repos(sql).callbackRequests.openOfPhoneNumber(scope, phoneNumberId);
      for (const id of ids) await this.cancelWithin(d, (await d.lifecycle.find(scope, id, true))!);
      if (ids.length > 0) await this.route(d);
      return ids.length;
    });
  }

  /** Routes the account's queue now, if a free agent and a routable request may meet (a look without the lock first). */
  async dispatch(scope: AccountScope, actor: AuditActor = systemActor(scope.accountId, SYSTEM)): Promise<number> {
    if (!(await this.lifecycle.mayRoute(scope))) return 0;
    return this.decide(scope, actor, (d) => this.route(d));
  }

  /** Accounts where a free online agent and a routable queued request could meet (the sweep's list). */
  routableAccounts(): Promise<bigint[]> {
    return this.lifecycle.routableAccounts();
  }

  /** The offered agent takes the offer: the request is accepted, then dialing; the agent is on a call. */
  accept(viewer: Viewer, rawId: unknown): Promise<LifecycleRow> {
    const id = parseId(rawId) ?? notFound();
    return this.decide(accountScope(viewer), actorOf(viewer), async (d) => {
      const request = (await d.lifecycle.find(d.scope, id, true)) ?? notFound();
      this.mustBeOffered(request, viewer, 'accept');
      const agentId = request.agentId!;
      await this.apply(d, request, 'accept', { sets: 'offer_expires_at = NULL', historyAgentId: agentId, reason: null });
      const dialing = await this.apply(
        d, { ...request, status: 'accepted' }, 'dial',
        { sets: 'attempts = c.attempts + 1, dialing_at = statement_timestamp()', historyAgentId: agentId, reason: null },
        await this.dialDetail(d, request, agentId),
      );
      await this.changeAgent(d, agentId, { sets: "offered_request_id = NULL, call_status = 'on_call', calls_accepted = a.calls_accepted + 1" });
      return dialing;
    });
  }

  /** The offered agent turns the offer down: the request goes to the next agent. */
  decline(viewer: Viewer, rawId: unknown): Promise<LifecycleRow> {
    const id = parseId(rawId) ?? notFound();
    return this.decide(accountScope(viewer), actorOf(viewer), async (d) => {
      const request = (await d.lifecycle.find(d.scope, id, true)) ?? notFound();
      this.mustBeOffered(request, viewer, 'decline');
      const queued = await this.requeueOffer(d, request, 'decline');
      await this.route(d, { requestId: request.id, agentId: viewer.userId });
      return queued;
    });
  }

  /** What the telephony integration (or the agent's client) reports of the dial. */
  outcome(viewer: Viewer, rawId: unknown, rawOutcome: unknown): Promise<LifecycleRow> {
    const id = parseId(rawId) ?? notFound();
    const v = new Validator();
    if (rawOutcome === undefined || rawOutcome === null || rawOutcome === '') v.add('outcome', 'BlankValue', 'Outcome: cannot be blank');
    else if (typeof rawOutcome !== 'string' || !(CALL_OUTCOMES as readonly string[]).includes(rawOutcome)) {
      v.add('outcome', 'InvalidValue', `Outcome: must be one of ${CALL_OUTCOMES.join(', ')}`);
    }
    v.throwIfAny();
    const outcome = rawOutcome as CallOutcome;
    return this.decide(accountScope(viewer), actorOf(viewer), async (d) => {
      const request = (await d.lifecycle.find(d.scope, id, true)) ?? notFound();
      // the offered agent, an admin, or a token with `write` (an integration acting for the account)
      if (viewer.role !== 'admin' && !viewer.token && request.agentId !== viewer.userId) {
        throw new ConflictError('The callback request is not being dialed for you');
      }
      const action = outcomeAction(outcome, request.attempts, d.settings.maxAttempts);
      transition(request.status, action);
      const agentId = request.agentId;
      let result: LifecycleRow;
      if (action === 'answer') {
        result = await this.apply(d, request, 'answer', { sets: 'completed_at = statement_timestamp()', historyAgentId: agentId, reason: 'answered' });
      } else if (action === 'requeue') {
        result = await this.apply(d, request, 'requeue', {
          sets: "agent_id = NULL, offered_agent_ids = '{}', retry_at = statement_timestamp() + make_interval(secs => $5::float8)",
          params: [d.settings.retryDelay], historyAgentId: agentId, reason: outcome,
        });
        await this.repos(d.sql).jobs.enqueue(d.scope, {
          kind: LIFECYCLE_JOBS.retryDue, key: `${id}:${request.attempts}`, payload: { request_id: String(id) }, delaySeconds: d.settings.retryDelay,
        });
      } else {
        result = await this.apply(d, request, 'fail', {
          sets: 'completed_at = statement_timestamp()', historyAgentId: agentId, reason: outcome === 'failed' ? 'failed' : `${outcome}: attempts used up`,
        });
      }
      if (agentId !== null) await this.endCall(d, agentId, action === 'answer' ? request : null);
      await this.route(d);
      return result;
    });
  }

  /** Withdraws a request that is not over yet (admins, or the agent who created it). */
  cancel(viewer: Viewer, rawId: unknown): Promise<LifecycleRow> {
    const id = parseId(rawId) ?? notFound();
    return this.decide(accountScope(viewer), actorOf(viewer), async (d) => {
      const request = (await d.lifecycle.find(d.scope, id, true)) ?? notFound();
      if (viewer.role !== 'admin' && request.createdById !== viewer.userId) throw new ForbiddenError();
      const cancelled = await this.cancelWithin(d, request);
      await this.route(d);
      return cancelled;
    });
  }

  /** Cancels a request the decision holds; its agent loses the offer, or ends the call. */
  private async cancelWithin(d: Decision, request: LifecycleRow): Promise<LifecycleRow> {
    transition(request.status, 'cancel');
    const agentId = request.agentId;
    const cancelled = await this.apply(d, request, 'cancel', { sets: 'offer_expires_at = NULL, completed_at = statement_timestamp()', historyAgentId: agentId, reason: null });
    if (agentId !== null && request.status === 'offered') await d.lifecycle.changeAgent(d.scope, agentId, { sets: 'offered_request_id = NULL' });
    else if (agentId !== null) await this.endCall(d, agentId, null);
    return cancelled;
  }

  /** The offer timer: a pending offer of this number is missed, and the request goes to the next agent. */
  async expireOffer(accountId: bigint, requestId: bigint, offerSeq: number): Promise<void> {
    const scope = { accountId };
    await this.decide(scope, systemActor(accountId, SYSTEM), async (d) => {
      const request = await d.lifecycle.find(d.scope, requestId, true);
      if (!request || request.status !== 'offered' || request.offerSeq !== offerSeq) return; // taken, declined or withdrawn meanwhile
      await this.requeueOffer(d, request, 'miss');
      await this.route(d, { requestId: request.id, agentId: request.agentId! });
    });
  }

  /** The wrap-up timer: the agent is free again, and may get the next offer. */
  async endWrapUp(accountId: bigint, userId: bigint, wrapUpSeq: number): Promise<void> {
    const scope = { accountId };
    await this.decide(scope, systemActor(accountId, SYSTEM), async (d) => {
      const agent = await d.lifecycle.availability(d.scope, userId, true);
      if (!agent || agent.callStatus !== 'wrap_up' || agent.wrapUpSeq !== wrapUpSeq) return;
      await this.changeAgent(d, userId, { sets: 'call_status = NULL, idle_since = statement_timestamp()' });
      await this.route(d);
    });
  }

  /**
   * An agent who stops being online (away, offline, transfers only) loses a pending offer at
   * once: the request goes to the next agent, and it is not counted as missed. In the
   * caller's decision (the availability change).
   */
  async rescindOfferOf(d: Decision, offeredRequestId: bigint): Promise<void> {
    const request = await d.lifecycle.find(d.scope, offeredRequestId, true);
    if (request && request.status === 'offered') await this.requeueOffer(d, request, 'rescind');
  }

  /**
   * One routing decision: the free agents and the routable queue, read under the lock;
   * route() picks; each offer moves its request, marks its agent, and sets its timer.
   * `held`: the agent who has just declined or missed a request does not get it back now
   * (with no other agent eligible, the next decision or the sweep offers it again).
   */
  async route(d: Decision, held?: { requestId: bigint; agentId: bigint }): Promise<number> {
    const agents = await d.lifecycle.onlineAgents(d.scope);
    if (!agents.some((a) => a.free)) return 0;
    const queue = await d.lifecycle.routable(d.scope, ROUTING_WINDOW);
    const offers = route(queue, agents, held);
    for (const offer of offers) {
      const request = (await d.lifecycle.find(d.scope, offer.requestId, true))!;
      const offered = await this.apply(d, request, 'offer', {
        sets: `agent_id = $5::bigint, offer_seq = c.offer_seq + 1, offer_expires_at = statement_timestamp() + make_interval(secs => $6::float8), retry_at = NULL,
               offered_agent_ids = CASE WHEN $7::boolean THEN ARRAY[$5::bigint] ELSE array_append(COALESCE(c.offered_agent_ids, '{}'), $5::bigint) END`,
        params: [String(offer.agentId), d.settings.offerTimeout, offer.newRound], historyAgentId: offer.agentId, reason: null,
      }, undefined, { offer_expires_in: d.settings.offerTimeout });
      await d.lifecycle.changeAgent(d.scope, offer.agentId, { sets: 'offered_request_id = $3::bigint', params: [String(offer.requestId)] });
      await this.repos(d.sql).jobs.enqueue(d.scope, {
        kind: LIFECYCLE_JOBS.offerExpired, key: `${offer.requestId}:${offered.offerSeq}`,
        payload: { request_id: String(offer.requestId), offer_seq: offered.offerSeq }, delaySeconds: d.settings.offerTimeout,
      });
    }
    return offers.length;
  }

  private mustBeOffered(request: LifecycleRow, viewer: Viewer, action: CallbackAction): void {
    transition(request.status, action);
    if (request.agentId !== viewer.userId) throw new ConflictError('The callback request is offered to another agent');
  }

  /** Missed, declined or rescinded: back in the queue, the agent free of the offer (a miss is counted). */
  private async requeueOffer(d: Decision, request: LifecycleRow, action: 'miss' | 'decline' | 'rescind'): Promise<LifecycleRow> {
    const agentId = request.agentId!;
    const queued = await this.apply(d, request, action, {
      sets: 'agent_id = NULL, offer_expires_at = NULL', historyAgentId: agentId, reason: transition(request.status, action).reason,
    });
    await d.lifecycle.changeAgent(d.scope, agentId, {
      sets: `offered_request_id = NULL${action === 'miss' ? ', calls_missed = a.calls_missed + 1' : ''}`,
    });
    return queued;
  }

  /** The agent's call is over: talk time counted (when answered), then wrap-up or free at once. */
  private async endCall(d: Decision, agentId: bigint, answered: LifecycleRow | null): Promise<void> {
    const counted = answered
      ? ', callbacks_completed = a.callbacks_completed + 1, talk_seconds = a.talk_seconds + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - $3::timestamptz))'
      : '';
    const params = answered ? [answered.dialingAt ?? new Date()] : [];
    if (d.settings.wrapUpTime > 0) {
      const agent = await this.changeAgent(d, agentId, { sets: `call_status = 'wrap_up', wrap_up_seq = a.wrap_up_seq + 1${counted}`, params });
      if (agent) {
        await this.repos(d.sql).jobs.enqueue(d.scope, {
          kind: LIFECYCLE_JOBS.wrapUpEnded, key: `${agentId}:${agent.wrapUpSeq}`,
          payload: { user_id: String(agentId), wrap_up_seq: agent.wrapUpSeq }, delaySeconds: d.settings.wrapUpTime,
        });
      }
    } else {
      await this.changeAgent(d, agentId, { sets: `call_status = NULL, idle_since = statement_timestamp()${counted}`, params });
    }
  }

  /** Changes an agent's row and emits agent.availability_changed when what Zendesk shows of it changed. */
  private async changeAgent(d: Decision, agentId: bigint, change: { sets: string; params?: unknown[] }) {
    const before = await d.lifecycle.availability(d.scope, agentId);
    const after = await d.lifecycle.changeAgent(d.scope, agentId, change);
    if (before && after && (before.agentState !== after.agentState || before.callStatus !== after.callStatus)) {
      await recordAudit(d.sql, d.actor, {
        action: 'update', sourceType: 'user', sourceId: agentId, sourceLabel: `agent ${agentId}`, changedFields: ['call_status'],
        description: `Call status: ${after.callStatus ?? 'none'}`,
        event: {
          name: 'agent.availability_changed', subject: `user:${agentId}`, detail: availabilityDetail(after),
          event: { previous: availabilityDetail(before), current: availabilityDetail(after) },
        },
      });
    }
    return after;
  }

  /**
   * Applies one transition of the table to a request the decision holds: the row and its
   * history, then its audit record and event. `extra` joins the event's `event` object.
   */
  private async apply(
    d: Decision, request: LifecycleRow, action: CallbackAction,
    change: { sets?: string; params?: unknown[]; historyAgentId: bigint | null; reason: string | null },
    dial?: Record<string, unknown>, extra?: Record<string, unknown>,
  ): Promise<LifecycleRow> {
    const t = transition(request.status, action);
    const moved = (await d.lifecycle.move(d.scope, request.id, t.from, t.to, change)) ?? notFound();
    await recordAudit(d.sql, d.actor, {
      action: 'update', sourceType: 'callback_request', sourceId: request.id, sourceLabel: request.requesterPhoneNumber,
      changedFields: ['status'], description: t.describe(change.historyAgentId),
      event: {
        name: t.event, subject: `callback_request:${request.id}`, detail: callbackDetail(moved),
        event: { previous_status: request.status, status: moved.status, agent_id: change.historyAgentId === null ? null : Number(change.historyAgentId), reason: change.reason, ...dial, ...extra },
      },
    });
    return moved;
  }

  /** The dialing event's instructions to the telephony integration: whom to call, from which number, for which agent. */
  private async dialDetail(d: Decision, request: LifecycleRow, agentId: bigint): Promise<Record<string, unknown>> {
    return {
      dial: { to: request.requesterPhoneNumber, from: request.phoneNumber, phone_number_id: Number(request.phoneNumberId), attempt: request.attempts + 1, agent: await d.lifecycle.agentContact(d.scope, agentId) },
    };
  }
}

function notFound(): never {
  throw new NotFoundError();
}
