import { Arg, Ctx, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import { authorize } from '../../domain/authorization';
import { BadRequestError, Validator } from '../../domain/errors';
import type { EventEnvelope } from '../../domain/events/event-log.repository';
import { eventNameOf } from '../../domain/events/event-types';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { AccountEvent } from '../types/event.types';

/**
 * The events of the viewer's account, live over graphql-ws (docs/api.md, "Live
 * events"). Subscribing asks the policy once; the field's @Allow asks it again
 * for every event, with the viewer as last authenticated.
 */
/** A subscription sent to POST /graphql: Apollo runs its field once, with no event. */
const overHttp = () => new BadRequestError('Subscriptions run over WebSocket (graphql-ws) on /graphql, not over HTTP');

function subscribeToEvents({ args, context }: SubscribeResolverData<unknown, { types?: string[] | null }, GraphQLContext>): AsyncIterable<EventEnvelope> {
  const session = context.subscriber;
  if (!session) throw overHttp();
  authorize(context.viewer, 'events.read');
  const types = args.types;
  if (types === undefined || types === null) return session.subscribe(null);
  const check = new Validator();
  for (const type of types) if (!eventNameOf(type)) check.add('types', 'InvalidValue', `Types: ${JSON.stringify(type).slice(0, 120)} is not an event type`);
  check.throwIfAny();
  return session.subscribe(new Set(types));
}

@Resolver(() => AccountEvent)
export class EventResolver {
  @Allow('events.read')
  @Subscription(() => AccountEvent, {
    description:
      "The account's events as they commit, in any process, over WebSocket (graphql-ws) on /graphql; credentials go in connection_init's payload ({\"authorization\": \"Bearer …\"})",
    subscribe: subscribeToEvents,
  })
  accountEvents(
    @Root() event: EventEnvelope,
    @Arg('types', () => [String], { nullable: true, description: 'Only these event types (full names, e.g. zen:event-type:oauth_token.revoked); all when omitted' }) _types: string[] | null | undefined,
    @Ctx() { subscriber }: GraphQLContext,
  ): AccountEvent {
    if (!subscriber) throw overHttp();
    return AccountEvent.from(event);
  }
}
