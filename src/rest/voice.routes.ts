import { Type } from 'typebox';
import {
  RestAgentsActivityDocument,
  RestCurrentQueueActivityDocument,
  RestSetAgentAvailabilityDocument,
  RestShowAgentAvailabilityDocument,
  type AgentState,
  type AgentVia,
  type RestAgentAvailabilityFragment,
} from '../generated/graphql';
import { NotFoundError } from '../domain/errors';
import { defineRoute, type AnyRestRoute } from './adapter';
import { getRoute } from './record-routes';
import { answer, BodyField, errorResponses, IdParams, Nullable, required, StringEnum, unwrap, wrappedBody } from './schemas';

// Zendesk Talk's Availabilities and Stats APIs (docs/api.md, "Agent availability", "Voice stats").

const STATES = ['online', 'offline', 'away', 'transfers_only'] as const;
const CALL_STATUSES = ['on_call', 'wrap_up'] as const;
const VIAS = ['client', 'phone'] as const;
const TAGS = ['Voice agents and stats'];
const AVAILABILITY_PATH = '/channels/voice/availabilities/:id';

const AvailabilityJson = Type.Object(
  {
    availability: Type.Object(
      {
        agent_state: StringEnum(STATES),
        call_status: Nullable(StringEnum(CALL_STATUSES), { description: 'Set by the callback lifecycle: on_call while dialing, wrap_up after; null when neither' }),
        via: Nullable(StringEnum(VIAS), { description: 'How the agent takes calls; null while offline' }),
      },
      { additionalProperties: false, title: 'Availability' },
    ),
  },
  { additionalProperties: false, examples: [{ availability: { agent_state: 'online', call_status: null, via: 'client' } }] },
);

const serializeAvailability = (a: RestAgentAvailabilityFragment) => ({
  availability: {
    agent_state: a.agentState.toLowerCase() as (typeof STATES)[number],
    call_status: a.callStatus === null ? null : (a.callStatus.toLowerCase() as (typeof CALL_STATUSES)[number]),
    via: a.via === null ? null : (a.via.toLowerCase() as (typeof VIAS)[number]),
  },
});

const AVAILABILITY_FIELDS = {
  agent_state: BodyField(StringEnum(STATES), `Agent state: must be one of ${STATES.join(', ')}`, 'Required: online, offline, away or transfers_only'),
  via: BodyField(StringEnum(VIAS), `Via: must be one of ${VIAS.join(', ')}`, 'client or phone; kept (or client) when omitted'),
};

const QueueActivityJson = Type.Object(
  {
    current_queue_activity: Type.Object(
      {
        agents_online: Type.Integer({ minimum: 0 }),
        callbacks_waiting: Type.Integer({ minimum: 0, description: 'Queued or offered' }),
        calls_waiting: Type.Integer({ minimum: 0, description: 'Always 0: this service queues callbacks only' }),
        average_wait_time: Type.Integer({ minimum: 0, description: 'Seconds the waiting callbacks have waited, on average' }),
        longest_wait_time: Type.Integer({ minimum: 0, description: 'Seconds the longest-waiting callback has waited' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const AgentsActivityJson = Type.Object(
  {
    agents_activity: Type.Array(
      Type.Object(
        {
          agent_id: Type.Integer(), name: Type.String(), agent_state: StringEnum(STATES), call_status: Nullable(StringEnum(CALL_STATUSES)),
          available_time: Type.Integer({ minimum: 0, description: 'Seconds online' }), calls_accepted: Type.Integer({ minimum: 0 }), calls_missed: Type.Integer({ minimum: 0 }),
          callbacks_completed: Type.Integer({ minimum: 0 }), average_talk_time: Type.Integer({ minimum: 0, description: 'Seconds, dialing to answered' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const voiceRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [AVAILABILITY_PATH],
    document: RestShowAgentAvailabilityDocument,
    schema: {
      operationId: 'showAgentAvailability', summary: "Show an agent's availability", tags: TAGS,
      description: 'Agents and admins; an id that is not an agent or admin of the account: 404. A new agent is offline.', params: IdParams,
      response: { 200: answer(AvailabilityJson, 'The availability'), ...errorResponses({ id: true }) },
    },
    variables: (req) => ({ agentId: req.params.id }),
    respond: (data) => {
      if (!data.agentAvailability) throw new NotFoundError();
      return { status: 200, body: serializeAvailability(data.agentAvailability) };
    },
  }),
  defineRoute({
    method: 'PUT',
    paths: [AVAILABILITY_PATH],
    document: RestSetAgentAvailabilityDocument,
    schema: {
      operationId: 'updateAgentAvailability', summary: "Set an agent's availability", tags: TAGS,
      description: "An agent sets their own, an admin anyone's in the account (another agent's: 403). online gets offers at once; leaving online hands a pending offer to the next agent.",
      params: IdParams,
      body: wrappedBody('availability', AVAILABILITY_FIELDS),
      response: { 200: answer(AvailabilityJson, 'The availability, as it is now'), ...errorResponses({ id: true, body: 'fields' }) },
    },
    variables: (req) => {
      const { agent_state: state, via } = unwrap(req.body, 'availability');
      return {
        agentId: req.params.id,
        input: { agentState: required(state, 'agent_state', 'Agent state').toUpperCase() as AgentState, ...(via === undefined ? {} : { via: via === null ? null : (via.toUpperCase() as AgentVia) }) },
      };
    },
    respond: (data) => ({ status: 200, body: serializeAvailability(data.setAgentAvailability) }),
  }),
  getRoute({
    path: '/channels/voice/stats/current_queue_activity',
    document: RestCurrentQueueActivityDocument,
    schema: { operationId: 'showCurrentQueueActivity', summary: 'Show the current queue activity', tags: TAGS, description: "The account's queue now. Agents and admins." },
    answer: { schema: QueueActivityJson, description: 'The queue now' },
    body: ({ currentQueueActivity: q }) => ({
      current_queue_activity: {
        agents_online: q.agentsOnline, callbacks_waiting: q.callbacksWaiting, calls_waiting: q.callsWaiting, average_wait_time: q.averageWaitTime, longest_wait_time: q.longestWaitTime,
      },
    }),
  }),
  getRoute({
    path: '/channels/voice/stats/agents_activity',
    document: RestAgentsActivityDocument,
    schema: { operationId: 'listAgentsActivity', summary: "List agents' activity", tags: TAGS, description: 'Every active agent and admin of the account, id ascending. Agents and admins.' },
    answer: { schema: AgentsActivityJson, description: "The agents' activity" },
    body: (data) => ({
      agents_activity: data.agentsActivity.map((a) => ({
        agent_id: Number(a.agentId), name: a.name, agent_state: a.agentState.toLowerCase() as (typeof STATES)[number],
        call_status: a.callStatus === null ? null : (a.callStatus.toLowerCase() as (typeof CALL_STATUSES)[number]), available_time: a.availableTime,
        calls_accepted: a.callsAccepted, calls_missed: a.callsMissed, callbacks_completed: a.callbacksCompleted, average_talk_time: a.averageTalkTime,
      })),
    }),
  }),
];
