import type { RestRoute } from './adapter';
import { oauthClientRoutes } from './oauth-clients.routes';
import { oauthTokenRoutes } from './oauth-tokens.routes';
import { callbackRequestRoutes } from './callback-requests.routes';

/** Every /api/v2 route of the seed. */
export const restRoutes: RestRoute<any, any>[] = [...oauthClientRoutes, ...oauthTokenRoutes, ...callbackRequestRoutes];
