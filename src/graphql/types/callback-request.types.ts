import { ArgsType, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { CallbackRequestRecord, CreatedCallbackRequest } from '../../domain/callback-requests/callback-request.service';
import { Connection } from '../connection';

export enum CallbackRequestStatus {
  QUEUED = 'queued',
  CALLING = 'calling',
  COMPLETED = 'completed',
  CANCELLED = 'cancelled',
}
registerEnumType(CallbackRequestStatus, {
  name: 'CallbackRequestStatus',
  description: 'Where a callback request is in its life',
  valuesConfig: {
    QUEUED: { description: 'Waiting in its phone number\'s queue for an agent (the state of a new request)' },
    CALLING: { description: 'An agent is calling the requester back' },
    COMPLETED: { description: 'The requester was called back' },
    CANCELLED: { description: 'Withdrawn, e.g. because its phone number was deleted' },
  },
});

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
  @Field(() => ID, { nullable: true, description: 'The agent (or admin) who created it; null if that user no longer exists' }) createdById!: string | null;
  @Field({ description: 'When the request was queued (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => CallbackRateLimit, { nullable: true, description: "The account's creation budget: only on the result of createCallbackRequest, null elsewhere" })
  rateLimit!: CallbackRateLimit | null;

  static from(r: CallbackRequestRecord | CreatedCallbackRequest): CallbackRequest {
    return Object.assign(new CallbackRequest(), {
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
  @Field(() => CallbackRequestStatus, { nullable: true, description: 'Only the requests in this status' }) status?: CallbackRequestStatus | null;
  @Field(() => Int, { nullable: true, defaultValue: 50, description: 'Page size: 1..100 (more is clamped to 100); 50 by default' }) first?: number | null;
  @Field(() => String, { nullable: true, description: "The requests after this cursor (an edge's cursor, or pageInfo.endCursor)" }) after?: string | null;
}
