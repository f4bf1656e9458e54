import type { RestRoute } from './adapter';
import { oauthClientRoutes } from './oauth-clients.routes';

/** Every /api/v2 route of the seed. */
export const restRoutes: RestRoute<any, any>[] = [...oauthClientRoutes];
