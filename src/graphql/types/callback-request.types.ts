import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { CallbackHistoryEntry, CallbackRequestView, CreatedCallbackRequest } from '../../domain/callback-requests/callback-request.service';
import { Connection } from '../connection';

export enum CallbackRequestStatus {
  QUEUED = 'queued',
  OFFERED = 'offered',
  ACCEPTED = 'accepted',
  DIALING = 'dialing',
  COMPLETED = 'completed',
  FAILED = 'failed',
  CANCELLED = 'cancelled',
}
registerEnumType(CallbackRequestStatus, {
  name: 'CallbackRequestStatus',
  description: 'Where a callback request is in its life: queued → offered → accepted → dialing → completed (docs/api.md, "The callback lifecycle")',
  valuesConfig: {
    QUEUED: { description: "Waiting in the queue for an agent (a new request; again after a missed or declined offer, or a retry)" },
    OFFERED: { description: 'Offered to one agent, who has callbackOfferTimeout seconds to accept or decline it' },
    ACCEPTED: { description: 'The offered agent accepted it (the request is dialing at once)' },
    DIALING: { description: 'The telephony integration is calling the requester back for the agent; it reports the outcome' },
    COMPLETED: { description: 'The requester answered: called back' },
    FAILED: { description: 'Not reached after callbackMaxAttempts dial attempts, or the call could not be placed' },
    CANCELLED: { description: 'Withdrawn by an admin or its creator, or because its phone number was deleted' },
  },
});

export enum CallbackOutcome {
  ANSWERED = 'answered',
  NO_ANSWER = 'no_answer',
  BUSY = 'busy',
  FAILED = 'failed',
}
registerEnumType(CallbackOutcome, {
  name: 'CallbackOutcome',
  description: 'What became of a dial, as the telephony integration reports it',
  valuesConfig: {
    ANSWERED: { description: 'The requester answered: the request is completed' },
    NO_ANSWER: { description: 'Nobody answered: back in the queue after callbackRetryDelay, or failed once callbackMaxAttempts are used' },
    BUSY: { description: 'The line was busy: as NO_ANSWER' },
    FAILED: { description: 'The call could not be placed at all (e.g. the number does not exist): the request fails at once' },
  },
});

@ObjectType({ simpleResolvers: true, description: 'One step of a callback request\'s life' })
export class CallbackHistoryStep {
  @Field(() => CallbackRequestStatus, { description: 'The status the request entered' }) status!: CallbackRequestStatus;
  @Field(() => ID, { nullable: true, description: 'The agent concerned (offered, accepted, dialing for); null when none' }) agentId!: string | null;
  @Field(() => String, { nullable: true, description: 'Why, when there is more to say: missed, declined, rescinded, answered, no_answer, busy, failed' })
  reason!: string | null;
  @Field({ description: 'When (ISO 8601, UTC)' }) at!: Date;

  static from(h: CallbackHistoryEntry): CallbackHistoryStep {
    return Object.assign(new CallbackHistoryStep(), { status: h.status as CallbackRequestStatus, agentId: h.agentId === null ? null : String(h.agentId), reason: h.reason, at: h.at });
  }
}

@ObjectType({ simpleResolvers: true, description: "The account's budget of callback request creations in the current rolling window" })
export class CallbackRateLimit {
  @Field(() => Int, { description: 'Creations allowed per window (X-Rate-Limit)' }) limit!: number;
  @Field(() => Int, { description: 'Creations left in the window after this one (X-Rate-Limit-Remaining)' }) remaining!: number;
}

@ObjectType({ simpleResolvers: true, description: 'A caller waiting to be called back on a voice phone number' })
export class CallbackRequest {
  @Field(() => ID, { description: "The request's id; ids grow in queue order" }) id!: string;
  @Field(() => ID, { description: 'The voice phone number the caller called (and is called back from)' }) phoneNumberId!: string;
  @Field({ description: 'The number to call back, E.164 (e.g. +12518717081)' }) requesterPhoneNumber!: string;
  @Field(() => [ID], { description: 'The groups the request asked for' }) requestedGroupIds!: string[];
  @Field(() => [ID], { description: 'The groups it is routed to: only the first one with omnichannel routing, else all' })
  routedGroupIds!: string[];
  @Field(() => CallbackRequestStatus, { description: 'Where the request is in its life' }) status!: CallbackRequestStatus;
  @Field(() => Int, { nullable: true, description: "Place in its phone number's queue, 1 = next; null unless queued" })
  queuePosition!: number | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Seconds until an agent calls back, estimated: queue position × the mean handling time of the last 20 completed callbacks ÷ agents online; null when unknown or not queued',
  })
  estimatedWaitTime!: number | null;
  @Field(() => ID, { nullable: true, description: 'The agent offered it, dialing it, or who completed it; null while queued' }) agentId!: string | null;
  @Field(() => Int, { description: 'Dial attempts made so far' }) attempts!: number;
  @Field(() => ID, { nullable: true, description: 'The agent (or admin) who created it; null if that user no longer exists' }) createdById!: string | null;
  @Field({ description: 'When the request was queued (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When its status last changed; null if it never did' }) updatedAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'When it ended (completed, failed or cancelled); null while open' }) completedAt!: Date | null;
  @Field(() => [CallbackHistoryStep], { description: 'Every status it went through, oldest first (empty on the result of createCallbackRequest)' })
  history!: CallbackHistoryStep[];
  @Field(() => CallbackRateLimit, { nullable: true, description: "The account's creation budget: only on the result of createCallbackRequest, null elsewhere" })
  rateLimit!: CallbackRateLimit | null;

  static from(r: CallbackRequestView | CreatedCallbackRequest): CallbackRequest {
    return Object.assign(new CallbackRequest(), {
      agentId: r.agentId === null ? null : String(r.agentId),
      attempts: r.attempts,
      updatedAt: r.updatedAt,
      completedAt: r.completedAt,
      history: 'history' in r ? r.history.map(CallbackHistoryStep.from) : [],
      estimatedWaitTime: 'estimatedWaitTime' in r ? r.estimatedWaitTime : null,
      id: String(r.id),
      phoneNumberId: String(r.phoneNumberId),
      requesterPhoneNumber: r.requesterPhoneNumber,
      requestedGroupIds: r.requestedGroupIds.map(String),
      routedGroupIds: r.routedGroupIds.map(String),
      status: r.status as CallbackRequestStatus,
      queuePosition: r.queuePosition,
      createdById: r.createdById === null ? null : String(r.createdById),
      createdAt: r.createdAt,
      rateLimit: 'rateLimit' in r ? Object.assign(new CallbackRateLimit(), r.rateLimit) : null,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'A page of callback requests, id ascending (queue order; Relay connection)' })
export class CallbackRequestConnection extends Connection(CallbackRequest, { totalCount: 'Requests matching the filter, all pages' }) {}

@InputType({ description: 'A callback request to create' })
export class CallbackRequestInput {
  @Field(() => ID, { nullable: true, description: 'Required: a voice phone number of the account' }) phoneNumberId?: string | null;
  @Field(() => String, { nullable: true, description: 'Required: the number to call back, E.164 (e.g. +12518717081)' })
  requesterPhoneNumber?: string | null;
  @Field(() => [ID], { nullable: true, description: 'Groups of the account to route to; with omnichannel routing only the first is used' })
  groupIds?: string[] | null;
}

@ArgsType()
export class CallbackRequestsArgs {
  @Field(() => ID, { nullable: true, description: 'Only the requests of this voice phone number' }) phoneNumberId?: string | null;
  @Field(() => ID, { nullable: true, description: 'Only the requests offered to, dialing for, or completed by this agent' }) agentId?: string | null;
  @Field(() => CallbackRequestStatus, { nullable: true, description: 'Only the requests in this status' }) status?: CallbackRequestStatus | null;
  @Field(() => Int, { nullable: true, defaultValue: 50, description: 'Page size: 1..100 (more is clamped to 100); 50 by default' }) first?: number | null;
  @Field(() => String, { nullable: true, description: "The requests after this cursor (an edge's cursor, or pageInfo.endCursor)" }) after?: string | null;
}
