import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { AvailabilityRow } from '../../domain/voice/callback-lifecycle.repository';
import type { AgentActivity as AgentActivityRecord, QueueActivity as QueueActivityRecord } from '../../domain/voice/voice-stats.repository';

// Agents' availability and Zendesk Talk's live stats (docs/api.md, "Agent availability", "Voice stats").

export enum AgentState {
  ONLINE = 'online',
  OFFLINE = 'offline',
  AWAY = 'away',
  TRANSFERS_ONLY = 'transfers_only',
}
registerEnumType(AgentState, {
  name: 'AgentState',
  description: "An agent's availability, as Zendesk Talk has it: only online agents are offered callbacks",
  valuesConfig: {
    ONLINE: { description: 'Available: offered callbacks when free' },
    OFFLINE: { description: 'Not working (the state of a new agent)' },
    AWAY: { description: 'Working, but not taking calls' },
    TRANSFERS_ONLY: { description: 'Takes transferred calls only: never offered callbacks' },
  },
});

export enum AgentCallStatus {
  ON_CALL = 'on_call',
  WRAP_UP = 'wrap_up',
}
registerEnumType(AgentCallStatus, {
  name: 'AgentCallStatus',
  description: "What an agent's phone is doing; set by the callback lifecycle, never by the agent",
  valuesConfig: {
    ON_CALL: { description: 'Calling a requester back (the request is dialing)' },
    WRAP_UP: { description: 'After a call, for the account\'s wrapUpTime seconds: no offer meanwhile' },
  },
});

export enum AgentVia {
  CLIENT = 'client',
  PHONE = 'phone',
}
registerEnumType(AgentVia, {
  name: 'AgentVia',
  description: 'How an agent takes calls',
  valuesConfig: { CLIENT: { description: 'In the browser (softphone)' }, PHONE: { description: 'On a phone number forwarded to' } },
});

@ObjectType({ simpleResolvers: true, description: "An agent's availability (Zendesk Talk's)" })
export class AgentAvailability {
  @Field(() => ID, { description: 'The agent (or admin)' }) agentId!: string;
  @Field(() => AgentState, { description: 'Whether the agent takes callbacks' }) agentState!: AgentState;
  @Field(() => AgentCallStatus, { nullable: true, description: 'On a call or in wrap-up; null when neither' }) callStatus!: AgentCallStatus | null;
  @Field(() => AgentVia, { nullable: true, description: 'How the agent takes calls; null while offline' }) via!: AgentVia | null;

  static from(a: AvailabilityRow): AgentAvailability {
    return Object.assign(new AgentAvailability(), {
      agentId: String(a.userId), agentState: a.agentState as AgentState, callStatus: a.callStatus as AgentCallStatus | null, via: a.via as AgentVia | null,
    });
  }
}

@InputType({ description: "An agent's new availability" })
export class AgentAvailabilityInput {
  @Field(() => AgentState, { description: 'The new state' }) agentState!: AgentState;
  @Field(() => AgentVia, { nullable: true, description: 'How the agent takes calls; kept (or CLIENT) when omitted' }) via?: AgentVia | null;
}

@ObjectType({ simpleResolvers: true, description: "The account's queue right now (Zendesk Talk's current_queue_activity); times in seconds" })
export class QueueActivity {
  @Field(() => Int, { description: 'Agents online now' }) agentsOnline!: number;
  @Field(() => Int, { description: 'Callback requests waiting for an agent (queued or offered)' }) callbacksWaiting!: number;
  @Field(() => Int, { description: 'Live inbound calls waiting: always 0, this service queues callbacks only' }) callsWaiting!: number;
  @Field(() => Int, { description: 'Mean time the waiting callbacks have waited so far' }) averageWaitTime!: number;
  @Field(() => Int, { description: 'Longest time a waiting callback has waited so far' }) longestWaitTime!: number;

  static from(q: QueueActivityRecord): QueueActivity {
    return Object.assign(new QueueActivity(), q);
  }
}

@ObjectType({ simpleResolvers: true, description: "An agent's activity (Zendesk Talk's agents_activity); times in seconds, counts since the agent's first availability" })
export class AgentActivity {
  @Field(() => ID, { description: 'The agent (or admin)' }) agentId!: string;
  @Field({ description: "The agent's name" }) name!: string;
  @Field(() => AgentState, { description: 'Availability now' }) agentState!: AgentState;
  @Field(() => AgentCallStatus, { nullable: true, description: 'On a call or in wrap-up now; null when neither' }) callStatus!: AgentCallStatus | null;
  @Field(() => Int, { description: 'Time spent online' }) availableTime!: number;
  @Field(() => Int, { description: 'Offers accepted' }) callsAccepted!: number;
  @Field(() => Int, { description: 'Offers that expired unanswered' }) callsMissed!: number;
  @Field(() => Int, { description: 'Callbacks the requester answered' }) callbacksCompleted!: number;
  @Field(() => Int, { description: 'Mean time from dialing to the answered outcome; 0 when none' }) averageTalkTime!: number;

  static from(a: AgentActivityRecord): AgentActivity {
    return Object.assign(new AgentActivity(), { ...a, agentId: String(a.agentId), agentState: a.agentState as AgentState, callStatus: a.callStatus as AgentCallStatus | null });
  }
}
