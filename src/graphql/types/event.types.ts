import { Field, ID, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { EventEnvelope } from '../../domain/events/event-log.repository';

/** An event of the account, in the envelope webhooks receive (docs/api.md, "Events"). */
@ObjectType({ simpleResolvers: true, description: "A change in the account, in Zendesk's event envelope (the body a webhook receives)" })
export class AccountEvent {
  @Field(() => ID, { description: "The event's id (a UUID): the same event a webhook receives has the same id" }) id!: string;
  @Field({ description: 'What happened, e.g. zen:event-type:oauth_client.created' }) type!: string;
  @Field({ description: 'What it happened to, e.g. zen:oauth_client:7' }) subject!: string;
  @Field({ description: 'When the change committed (ISO 8601, UTC)' }) time!: Date;
  @Field(() => GraphQLJSONObject, { description: 'The resource as the REST API shows it after the change (never a secret or a full token)' }) detail!: Record<string, unknown>;
  @Field(() => GraphQLJSONObject, { description: 'What changed: changed_fields with their previous and current values, or {}' }) event!: Record<string, unknown>;
  @Field({ description: "Zendesk's event schema version of the envelope" }) zendeskEventVersion!: string;

  static from(e: EventEnvelope): AccountEvent {
    return Object.assign(new AccountEvent(), {
      id: e.id, type: e.type, subject: e.subject, time: new Date(e.time), detail: e.detail, event: e.event, zendeskEventVersion: e.zendesk_event_version,
    });
  }
}
