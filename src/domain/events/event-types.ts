// The events the service emits (docs/api.md, "Events"): one per change, in Zendesk's
// envelope, with the type `zen:event-type:<name>`. Declared here once: the events
// written beside the audit records, the webhooks' subscriptions (an unknown type is
// 422) and the GraphQL subscription's filter all take them from this list.

export const EVENT_NAMES = [
  'oauth_client.created',
  'oauth_client.updated',
  'oauth_client.deleted',
  'oauth_client.secret_regenerated',
  'oauth_token.created',
  'oauth_token.revoked',
  'user.created',
  'user.updated',
  'user.deleted',
  'callback_request.created',
  // the callback lifecycle (docs/api.md, "The callback lifecycle")
  'callback_request.offered',
  'callback_request.accepted',
  'callback_request.dialing',
  'callback_request.completed',
  'callback_request.requeued',
  'callback_request.failed',
  'callback_request.cancelled',
  'agent.availability_changed',
  // API tokens (docs/api.md, "API tokens"): never the token itself, its first 10 characters
  'api_token.created',
  'api_token.deleted',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

export const EVENT_TYPE_PREFIX = 'zen:event-type:';

/** `zen:event-type:oauth_token.revoked` for `oauth_token.revoked`. */
export function eventType(name: EventName): string {
  return `${EVENT_TYPE_PREFIX}${name}`;
}

/** The name of a full event type, or undefined when it is not one of ours. */
export function eventNameOf(type: string): EventName | undefined {
  if (!type.startsWith(EVENT_TYPE_PREFIX)) return undefined;
  const name = type.slice(EVENT_TYPE_PREFIX.length);
  return (EVENT_NAMES as readonly string[]).includes(name) ? (name as EventName) : undefined;
}
