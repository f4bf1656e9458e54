import 'reflect-metadata';
import { buildSchemaSync } from 'type-graphql';
import type { GraphQLSchema } from 'graphql';
import { authorizeFields, describeAccess } from './auth-checker';
import { limitResolvedObjects } from './limits';
import { AuditLogResolver } from './resolvers/audit-log.resolver';
import { DirectoryResolver } from './resolvers/directory.resolver';
import { UserResolver } from './resolvers/user.resolver';
import { GroupResolver } from './resolvers/group.resolver';
import { GroupMembershipResolver } from './resolvers/group-membership.resolver';
import { PhoneNumberResolver } from './resolvers/phone-number.resolver';
import { AccountResolver } from './resolvers/account.resolver';
import { OAuthClientResolver } from './resolvers/oauth-client.resolver';
import { CallbackRequestResolver } from './resolvers/callback-request.resolver';
import { EventResolver } from './resolvers/event.resolver';
import { VoiceResolver } from './resolvers/voice.resolver';
import { OAuthClientTokensResolver, OAuthTokenResolver } from './resolvers/oauth-token.resolver';
import { WebhookResolver } from './resolvers/webhook.resolver';
import { WebhookInvocationResolver } from './resolvers/webhook-invocation.resolver';
import { AuthorizedAppResolver } from './resolvers/authorized-app.resolver';

const resolvers = [
  DirectoryResolver, UserResolver, GroupResolver, GroupMembershipResolver, PhoneNumberResolver, AccountResolver,
  OAuthClientResolver, OAuthTokenResolver, OAuthClientTokensResolver, CallbackRequestResolver, AuditLogResolver, WebhookResolver, WebhookInvocationResolver, EventResolver, VoiceResolver,
  AuthorizedAppResolver,
] as const;

// Subscriptions here return their own async iterators (src/domain/events/event-feed.ts);
// type-graphql asks for a PubSub all the same, which nothing uses.
const unusedPubSub = {
  publish: () => undefined,
  subscribe: () => {
    throw new Error('no PubSub: subscriptions return their own iterators');
  },
};

let schema: GraphQLSchema | undefined;

/** The one schema, built from the resolver classes (type-graphql metadata is process-wide). */
export function buildGraphQLSchema(): GraphQLSchema {
  if (!schema) {
    schema = buildSchemaSync({
      resolvers,
      validate: false,
      pubSub: unusedPubSub,
    });
    // type-graphql describes every type but the root ones
    schema.getQueryType()!.description =
      'What you can read. Every field needs credentials (Authorization: Basic or Bearer), and says who may use it and what a token needs.';
    schema.getMutationType()!.description =
      'What you can change. Each change is one transaction; changes to clients, tokens, users, groups, group memberships, phone numbers, settings and webhooks are recorded in the audit log. Every field says who may use it and what a token needs.';
    schema.getSubscriptionType()!.description =
      'What you can watch live, over WebSocket (graphql-ws) on /graphql, with credentials in the connection_init payload. Every field says who may use it and what a token needs.';
    describeAccess(schema);
    // the policy first, then the object budget around it (as when the check was a type-graphql middleware)
    authorizeFields(schema);
    limitResolvedObjects(schema);
  }
  return schema;
}
