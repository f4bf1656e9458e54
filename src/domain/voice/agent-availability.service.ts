import { actorOf, recordAudit } from '../audit/audit-log.repository';
import { accountScope, type AccountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import { ForbiddenError, NotFoundError, Validator } from '../errors';
import { parseId } from '../ids';
import type { AgentState, AvailabilityRow, CallbackLifecycleRepository } from './callback-lifecycle.repository';
import type { CallbackLifecycleService } from './callback-lifecycle.service';
import { availabilityDetail } from './voice-details';

// Agents' availability (Zendesk Talk's Availabilities API; docs/api.md, "Agent
// availability"): an agent sets their own state, an admin anyone's in the account. The
// call status is the lifecycle's (on_call while dialing, wrap_up after), never set here.
// A change is a lifecycle decision: coming online routes the queue at once; leaving with a
// pending offer hands it to the next agent.

const AGENT_STATES = ['online', 'offline', 'away', 'transfers_only'] as const;
const VIAS = ['client', 'phone'] as const;

export interface AvailabilityInput {
  agentState?: unknown;
  via?: unknown;
}

export class AgentAvailabilityService {
  constructor(
    private readonly lifecycle: CallbackLifecycleRepository,
    private readonly decisions: CallbackLifecycleService,
  ) {}

  /** An agent's (or admin's) availability; 404 for an id that is not an agent of the account. */
  async find(viewer: Viewer, rawAgentId: unknown): Promise<AvailabilityRow> {
    const scope = accountScope(viewer);
    const agentId = await this.agentOf(scope, rawAgentId);
    return (await this.lifecycle.availability(scope, agentId)) ?? offlineAvailability(agentId);
  }

  async set(viewer: Viewer, rawAgentId: unknown, input: AvailabilityInput): Promise<AvailabilityRow> {
    const scope = accountScope(viewer);
    const agentId = await this.agentOf(scope, rawAgentId);
    if (viewer.role !== 'admin' && agentId !== viewer.userId) throw new ForbiddenError();
    const v = new Validator();
    const state = input.agentState;
    if (state === undefined || state === null || state === '') v.add('agent_state', 'BlankValue', 'Agent state: cannot be blank');
    else if (typeof state !== 'string' || !(AGENT_STATES as readonly string[]).includes(state)) {
      v.add('agent_state', 'InvalidValue', `Agent state: must be one of ${AGENT_STATES.join(', ')}`);
    }
    if (input.via !== undefined && input.via !== null && !(VIAS as readonly unknown[]).includes(input.via)) v.add('via', 'InvalidValue', `Via: must be one of ${VIAS.join(', ')}`);
    v.throwIfAny();
    const next = state as AgentState;
    return this.decisions.decide(scope, actorOf(viewer), async (d) => {
      const before = (await d.lifecycle.ensureAvailability(scope, agentId)) ?? notFound();
      const via = next === 'offline' ? null : ((input.via as AvailabilityRow['via'] | undefined) ?? before.via ?? 'client');
      if (before.agentState === next && before.via === via) return before;
      const comesOnline = next === 'online' && before.agentState !== 'online';
      const leaves = before.agentState === 'online' && next !== 'online';
      const sets = [
        'agent_state = $3::"AgentState"', 'via = $4::text',
        comesOnline ? 'online_since = statement_timestamp(), idle_since = CASE WHEN a.call_status IS NULL THEN statement_timestamp() ELSE a.idle_since END' : '',
        leaves ? 'available_seconds = a.available_seconds + GREATEST(0, EXTRACT(EPOCH FROM statement_timestamp() - COALESCE(a.online_since, statement_timestamp()))), online_since = NULL' : '',
      ].filter(Boolean).join(', ');
      const after = (await d.lifecycle.changeAgent(scope, agentId, { sets, params: [next, via] }))!;
      await recordAudit(d.sql, d.actor, {
        action: 'update', sourceType: 'user', sourceId: agentId, sourceLabel: `agent ${agentId}`, changedFields: [...(before.agentState !== next ? ['agent_state'] : []), ...(before.via !== via ? ['via'] : [])],
        description: `Agent state: ${next}`,
        event: {
          name: 'agent.availability_changed', subject: `user:${agentId}`, detail: availabilityDetail(after),
          event: { previous: availabilityDetail(before), current: availabilityDetail(after) },
        },
      });
      if (next !== 'online' && before.offeredRequestId !== null) await this.decisions.rescindOfferOf(d, before.offeredRequestId);
      if (next === 'online' || before.offeredRequestId !== null) await this.decisions.route(d);
      return (await d.lifecycle.availability(scope, agentId))!;
    });
  }

  /** The id of an active agent or admin of the scope's account, or 404. */
  private async agentOf(scope: AccountScope, rawAgentId: unknown): Promise<bigint> {
    const id = parseId(rawAgentId);
    if (id === null || !(await this.lifecycle.isAgent(scope, id))) throw new NotFoundError();
    return id;
  }
}

function notFound(): never {
  throw new NotFoundError();
}

/** An agent's availability when they have no row: offline, never counted. */
function offlineAvailability(userId: bigint): AvailabilityRow {
  return {
    userId, agentState: 'offline', callStatus: null, via: null, idleSince: null, onlineSince: null, availableSeconds: 0, offeredRequestId: null,
    wrapUpSeq: 0, callsAccepted: 0, callsMissed: 0, callbacksCompleted: 0, talkSeconds: 0,
  };
}
