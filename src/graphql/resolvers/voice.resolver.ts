import { Arg, Ctx, ID, Mutation, Query, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import { accountScope, authorize } from '../../domain/authorization';
import { BadRequestError } from '../../domain/errors';
import type { EventEnvelope } from '../../domain/events/event-log.repository';
import { eventType, EVENT_NAMES, type EventName } from '../../domain/events/event-types';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { CallbackRequest } from '../types/callback-request.types';
import { AgentActivity, AgentAvailability, AgentAvailabilityInput, AgentCallStatus, AgentState, AgentVia, QueueActivity } from '../types/voice.types';

// Agents' availability, Zendesk Talk's stats, and the typed live feeds dashboards watch
// (over the events' graphql-ws transport, filtered by account and role like every event).

const AGENT_ARG = { description: 'The agent (or admin) id' };
const CALLBACK_EVENTS = EVENT_NAMES.filter((n) => n.startsWith('callback_request.'));
const AVAILABILITY_EVENTS: EventName[] = ['agent.availability_changed'];

const overHttp = () => new BadRequestError('Subscriptions run over WebSocket (graphql-ws) on /graphql, not over HTTP');

/** A subscription to some of the account's events, for agents and admins. */
function feed(names: readonly EventName[]) {
  return ({ context }: SubscribeResolverData<unknown, unknown, GraphQLContext>): AsyncIterable<EventEnvelope> => {
    const session = context.subscriber;
    if (!session) throw overHttp();
    authorize(context.viewer, 'callbackRequests.read');
    return session.subscribe(new Set(names.map(eventType)), 'callbackRequests.read');
  };
}

const subjectId = (event: EventEnvelope) => event.subject.slice(event.subject.lastIndexOf(':') + 1);

@Resolver()
export class VoiceResolver {
  @Allow('agentAvailability.read')
  @Query(() => AgentAvailability, { nullable: true, description: "An agent's availability (offline when never set); null for an id that is not an agent or admin of the account" })
  async agentAvailability(@Arg('agentId', () => ID, AGENT_ARG) agentId: string, @Ctx() { viewer, services }: GraphQLContext): Promise<AgentAvailability | null> {
    const found = await services.agentAvailability.find(viewer!, agentId).catch((err) => (err?.code === 'NOT_FOUND' ? null : Promise.reject(err)));
    return found && AgentAvailability.from(found);
  }

  @Allow('agentAvailability.write')
  @Mutation(() => AgentAvailability, { description: "Sets an agent's state (agents their own, admins anyone's): ONLINE gets offers at once; leaving ONLINE hands a pending offer to the next agent" })
  async setAgentAvailability(
    @Arg('agentId', () => ID, AGENT_ARG) agentId: string,
    @Arg('input', () => AgentAvailabilityInput, { description: 'The new availability' }) input: AgentAvailabilityInput,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<AgentAvailability> {
    return AgentAvailability.from(await services.agentAvailability.set(viewer!, agentId, input));
  }

  @Allow('callbackRequests.read')
  @Query(() => QueueActivity, { description: "The account's queue right now (Zendesk Talk's current_queue_activity)" })
  async currentQueueActivity(@Ctx() { viewer, services }: GraphQLContext): Promise<QueueActivity> {
    return QueueActivity.from(await services.voiceStats.queueActivity(accountScope(viewer!)));
  }

  @Allow('callbackRequests.read')
  @Query(() => [AgentActivity], { description: "Every agent's activity, id ascending (Zendesk Talk's agents_activity)" })
  async agentsActivity(@Ctx() { viewer, services }: GraphQLContext): Promise<AgentActivity[]> {
    return (await services.voiceStats.agentsActivity(accountScope(viewer!))).map(AgentActivity.from);
  }

  @Allow('callbackRequests.read')
  @Subscription(() => CallbackRequest, {
    description: "Each change of a callback request of the account (created, offered, accepted, dialing, completed, requeued, failed, cancelled), as it commits in any process, over WebSocket (graphql-ws) on /graphql",
    subscribe: feed(CALLBACK_EVENTS),
  })
  async callbackRequestUpdated(@Root() event: EventEnvelope, @Ctx() ctx: GraphQLContext): Promise<CallbackRequest> {
    if (!ctx.subscriber) throw overHttp();
    const found = await ctx.services.callbackRequests.find(ctx.viewer!, subjectId(event));
    // a request deleted since (its account or phone number gone) is shown as the event saw it
    return found ? CallbackRequest.from(found) : Object.assign(new CallbackRequest(), eventRequest(event));
  }

  @Allow('callbackRequests.read')
  @Subscription(() => QueueActivity, {
    description: "The account's queue activity again after each change of a callback request or of an agent's availability, over WebSocket (graphql-ws) on /graphql",
    subscribe: feed([...CALLBACK_EVENTS, ...AVAILABILITY_EVENTS]),
  })
  async queueActivityUpdated(@Root() _event: EventEnvelope, @Ctx() ctx: GraphQLContext): Promise<QueueActivity> {
    if (!ctx.subscriber) throw overHttp();
    return QueueActivity.from(await ctx.services.voiceStats.queueActivity(accountScope(ctx.viewer!)));
  }

  @Allow('callbackRequests.read')
  @Subscription(() => AgentAvailability, {
    description: "Each change of an agent's availability or call status in the account, over WebSocket (graphql-ws) on /graphql",
    subscribe: feed(AVAILABILITY_EVENTS),
  })
  agentAvailabilityChanged(@Root() event: EventEnvelope, @Ctx() ctx: GraphQLContext): AgentAvailability {
    if (!ctx.subscriber) throw overHttp();
    const d = event.detail as { agent_id: number; agent_state: string; call_status: string | null; via: string | null };
    return Object.assign(new AgentAvailability(), {
      agentId: String(d.agent_id), agentState: d.agent_state as AgentState, callStatus: d.call_status as AgentCallStatus | null, via: d.via as AgentVia | null,
    });
  }
}

/** A request as its event's detail shows it (when it no longer exists). */
function eventRequest(event: EventEnvelope): Partial<CallbackRequest> {
  const d = event.detail as Record<string, unknown>;
  const date = (v: unknown) => (typeof v === 'string' ? new Date(v) : null);
  return {
    id: String(d.id), phoneNumberId: String(d.phone_number_id), requesterPhoneNumber: String(d.requester_phone_number),
    requestedGroupIds: ((d.group_ids as number[]) ?? []).map(String), routedGroupIds: [], status: d.status as CallbackRequest['status'],
    queuePosition: null, estimatedWaitTime: null, agentId: d.agent_id == null ? null : String(d.agent_id), attempts: Number(d.attempts ?? 0),
    createdById: null, createdAt: date(d.created_at)!, updatedAt: date(d.updated_at), completedAt: date(d.completed_at), history: [], rateLimit: null,
  };
}
