import type { AnyRestRoute } from './adapter';
import { oauthClientRoutes } from './oauth-clients.routes';
import { oauthTokenRoutes } from './oauth-tokens.routes';
import { callbackRequestRoutes } from './callback-requests.routes';
import { auditLogRoutes } from './audit-logs.routes';
import { userRoutes } from './users.routes';
import { groupRoutes } from './groups.routes';
import { groupMembershipRoutes } from './group-memberships.routes';
import { phoneNumberRoutes } from './phone-numbers.routes';
import { accountSettingsRoutes } from './account-settings.routes';
import { webhookRoutes } from './webhooks.routes';
import { webhookInvocationRoutes } from './webhook-invocations.routes';
import { voiceRoutes } from './voice.routes';
import { authorizedAppRoutes } from './authorized-apps.routes';

/** Every /api/v2 route (docs/api.md lists them). */
export const restRoutes: AnyRestRoute[] = [
  ...oauthClientRoutes, ...oauthTokenRoutes, ...callbackRequestRoutes, ...userRoutes, ...groupRoutes, ...groupMembershipRoutes, ...phoneNumberRoutes, ...accountSettingsRoutes,
  ...auditLogRoutes, ...webhookRoutes, ...webhookInvocationRoutes, ...voiceRoutes,
  ...authorizedAppRoutes,
];
