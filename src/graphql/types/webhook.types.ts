import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { SigningSecret, WebhookRecord } from '../../domain/webhooks/webhook.service';
import { Connection, CursorPageArgs } from '../connection';

// Webhooks in GraphQL (docs/api.md, "Webhooks"): Zendesk's fields in camelCase, its
// values as enums whose values are Zendesk's (POST, json, active).

export enum WebhookHttpMethod {
  GET = 'GET',
  POST = 'POST',
  PUT = 'PUT',
  PATCH = 'PATCH',
  DELETE = 'DELETE',
}
registerEnumType(WebhookHttpMethod, {
  name: 'WebhookHttpMethod',
  description: 'The HTTP method of the requests a webhook sends (Zendesk\'s set); a webhook subscribed to events must use POST',
  valuesConfig: {
    GET: { description: 'GET' }, POST: { description: 'POST: required to receive events' }, PUT: { description: 'PUT' }, PATCH: { description: 'PATCH' }, DELETE: { description: 'DELETE' },
  },
});

export enum WebhookRequestFormat {
  JSON = 'json',
}
registerEnumType(WebhookRequestFormat, {
  name: 'WebhookRequestFormat',
  description: 'The format of the requests a webhook sends (REST `request_format`)',
  valuesConfig: { JSON: { description: 'application/json: events are JSON' } },
});

export enum WebhookStatus {
  ACTIVE = 'active',
  INACTIVE = 'inactive',
}
registerEnumType(WebhookStatus, {
  name: 'WebhookStatus',
  description: 'Whether a webhook sends requests (REST `status`)',
  valuesConfig: { ACTIVE: { description: 'Sends the events it subscribes to' }, INACTIVE: { description: 'Sends nothing' } },
});

@ObjectType({ simpleResolvers: true, description: 'A webhook: where the events it subscribes to are sent (its signing secret is read apart, with webhookSigningSecret)' })
export class Webhook {
  @Field(() => ID, { description: "The webhook's id" }) id!: string;
  @Field({ description: "The webhook's name, 1..255 characters" }) name!: string;
  @Field(() => String, { nullable: true, description: 'What the webhook is for, at most 1000 characters; null when none' }) description!: string | null;
  @Field({ description: 'The URL requests are sent to (https, to a public address, in production)' }) endpoint!: string;
  @Field(() => WebhookHttpMethod, { description: 'The HTTP method of its requests' }) httpMethod!: WebhookHttpMethod;
  @Field(() => WebhookRequestFormat, { description: 'The format of its requests' }) requestFormat!: WebhookRequestFormat;
  @Field(() => WebhookStatus, { description: 'Whether it sends requests' }) status!: WebhookStatus;
  @Field(() => [String], { description: 'The event types it is subscribed to, e.g. zen:event-type:oauth_token.revoked' }) subscriptions!: string[];
  @Field(() => ID, { nullable: true, description: 'The user who created it; null when the system did' }) createdById!: string | null;
  @Field(() => ID, { nullable: true, description: 'The user who last changed it; null until the first change' }) updatedById!: string | null;
  @Field({ description: 'When it was created (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When it last changed; null until the first change' }) updatedAt!: Date | null;

  static from(r: WebhookRecord): Webhook {
    return Object.assign(new Webhook(), {
      id: String(r.id), name: r.name, description: r.description, endpoint: r.endpoint, httpMethod: r.httpMethod as WebhookHttpMethod,
      requestFormat: r.requestFormat as WebhookRequestFormat, status: r.status as WebhookStatus, subscriptions: r.subscriptions,
      createdById: r.createdBy === null ? null : String(r.createdBy), updatedById: r.updatedBy === null ? null : String(r.updatedBy),
      createdAt: r.createdAt, updatedAt: r.updatedAt,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'A page of webhooks, id ascending (Relay connection)' })
export class WebhookConnection extends Connection(Webhook) {}

@ArgsType()
export class WebhooksArgs extends CursorPageArgs {
  @Field(() => WebhookStatus, { nullable: true, description: 'Only the webhooks of this status' }) status?: WebhookStatus | null;
  @Field(() => String, { nullable: true, description: 'Only the webhooks whose name contains this text (case-insensitive)' }) nameContains?: string | null;
}

@ObjectType({ simpleResolvers: true, description: "A webhook's signing secret: receivers verify each request's signature with it" })
export class WebhookSigningSecret {
  @Field({ description: 'The signature algorithm: SHA256 (HMAC-SHA256, base64)' }) algorithm!: string;
  @Field({ description: 'The secret, in full' }) secret!: string;

  static from(s: SigningSecret): WebhookSigningSecret {
    return Object.assign(new WebhookSigningSecret(), s);
  }
}

@InputType({ description: 'Fields of a webhook: all but description and subscriptions are required on create and replace; a patch changes the given ones' })
export class WebhookInput {
  @Field(() => String, { nullable: true, description: "The webhook's name: 1..255 characters after trimming" }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'What it is for, at most 1000 characters; null or "" for none' }) description?: string | null;
  @Field(() => String, { nullable: true, description: 'An absolute http(s) URL without credentials, at most 2000 characters; in production https to a public address' }) endpoint?: string | null;
  @Field(() => WebhookHttpMethod, { nullable: true, description: 'The HTTP method of its requests: POST to receive events' }) httpMethod?: WebhookHttpMethod | null;
  @Field(() => WebhookRequestFormat, { nullable: true, description: 'The format of its requests: JSON' }) requestFormat?: WebhookRequestFormat | null;
  @Field(() => WebhookStatus, { nullable: true, description: 'ACTIVE or INACTIVE' }) status?: WebhookStatus | null;
  @Field(() => [String], { nullable: true, description: 'Event types, e.g. zen:event-type:oauth_client.created; an unknown one is refused; null or omitted for none (a patch: keep)' })
  subscriptions?: string[] | null;
}
