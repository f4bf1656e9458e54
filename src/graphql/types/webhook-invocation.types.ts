import { ArgsType, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { TestResult } from '../../domain/webhooks/webhook-delivery.service';
import type { AttemptRecord, InvocationRecord } from '../../domain/webhooks/webhook-invocation.service';
import { Connection, CursorPageArgs } from '../connection';

// What webhooks sent (docs/api.md, "Webhook deliveries"): invocations and their attempts.

export enum WebhookInvocationStatus {
  PENDING = 'pending',
  RETRYING = 'retrying',
  SUCCESS = 'success',
  FAILED = 'failed',
}
registerEnumType(WebhookInvocationStatus, {
  name: 'WebhookInvocationStatus',
  description: 'Where the delivery of one event to one webhook stands (REST `status`)',
  valuesConfig: {
    PENDING: { description: 'Not attempted yet' },
    RETRYING: { description: 'An attempt failed; another will follow' },
    SUCCESS: { description: 'The receiver answered 2xx' },
    FAILED: { description: 'Given up: a final answer, the attempts used up, or the webhook inactive or deleted' },
  },
});

@ObjectType({ simpleResolvers: true, description: 'One event sent (or being sent) to one webhook' })
export class WebhookInvocation {
  @Field(() => ID, { description: "The invocation's id: the webhook-id header of its requests" }) id!: string;
  @Field(() => ID, { description: 'The webhook it was sent to' }) webhookId!: string;
  @Field(() => ID, { description: "The event's id (the envelope's id)" }) eventId!: string;
  @Field({ description: 'The event type, zen:event-type:<name>' }) eventType!: string;
  @Field(() => WebhookInvocationStatus, { description: 'Where the delivery stands' }) status!: WebhookInvocationStatus;
  @Field(() => Int, { description: 'Requests made so far' }) attempts!: number;
  @Field(() => String, { nullable: true, description: 'Why it failed, when it did' }) reason!: string | null;
  @Field({ description: 'When it was created (ISO 8601, UTC)' }) createdAt!: Date;
  @Field({ description: 'When it last changed' }) updatedAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When it succeeded or failed for good; null while under way' }) completedAt!: Date | null;

  static from(r: InvocationRecord): WebhookInvocation {
    return Object.assign(new WebhookInvocation(), {
      id: String(r.id), webhookId: String(r.webhookId), eventId: r.eventId, eventType: r.eventType, status: r.status as WebhookInvocationStatus, attempts: r.attempts,
      reason: r.reason, createdAt: r.createdAt, updatedAt: r.updatedAt, completedAt: r.completedAt,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'A page of invocations, id ascending (Relay connection)' })
export class WebhookInvocationConnection extends Connection(WebhookInvocation) {}

@ArgsType()
export class WebhookInvocationsArgs extends CursorPageArgs {
  @Field(() => ID, { description: "The webhook's id" }) webhookId!: string;
  @Field(() => WebhookInvocationStatus, { nullable: true, description: 'Only the invocations of this status' }) status?: WebhookInvocationStatus | null;
  @Field(() => String, { nullable: true, description: 'Only the invocations of this event type, e.g. zen:event-type:oauth_client.created' }) eventType?: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'One HTTP request of an invocation, and what the receiver answered' })
export class WebhookInvocationAttempt {
  @Field(() => ID, { description: "The attempt's id" }) id!: string;
  @Field(() => ID, { description: 'The invocation it belongs to' }) invocationId!: string;
  @Field({ description: 'When the request started' }) startedAt!: Date;
  @Field(() => Int, { description: 'Milliseconds until the answer (or the error)' }) durationMs!: number;
  @Field(() => Int, { nullable: true, description: "The receiver's HTTP status; null when it gave none (connection error, timeout, refused address)" }) statusCode!: number | null;
  @Field(() => String, { nullable: true, description: 'Why there was no answer; null when there was one' }) error!: string | null;
  @Field(() => String, { nullable: true, description: "The first KB of the answer's body; null when there was no answer" }) response!: string | null;

  static from(r: AttemptRecord): WebhookInvocationAttempt {
    return Object.assign(new WebhookInvocationAttempt(), {
      id: String(r.id), invocationId: String(r.invocationId), startedAt: r.startedAt, durationMs: r.durationMs, statusCode: r.statusCode, error: r.error, response: r.response,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'What the receiver answered to a test event' })
export class WebhookTestResponse {
  @Field(() => Int, { nullable: true, description: "The receiver's HTTP status; null when it gave none" }) status!: number | null;
  @Field(() => String, { nullable: true, description: "The first KB of the answer's body; null when there was no answer" }) body!: string | null;
  @Field(() => String, { nullable: true, description: 'Why there was no answer (connection error, timeout, refused address); null when there was one' }) error!: string | null;

  static from(r: TestResult): WebhookTestResponse {
    return Object.assign(new WebhookTestResponse(), r);
  }
}
