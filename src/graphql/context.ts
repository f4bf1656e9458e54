import type { Services } from '../domain/services';
import type { Viewer } from '../domain/auth/viewer';
import type { Loaders } from './loaders';
import type { ObjectCount } from './limits';
import type { SubscriberSession } from '../domain/events/subscriber-session';

export interface GraphQLContext {
  viewer: Viewer | null;
  services: Services;
  /** scheme://host of the request, or PUBLIC_URL: the base of url fields */
  baseUrl: string;
  /** per-request DataLoaders; null without a viewer */
  loaders: Loaders | null;
  /** objects resolved so far (graphql/limits.ts limitResolvedObjects), set on first use */
  objects?: ObjectCount;
  /** the WebSocket connection's session, for subscriptions (absent over HTTP) */
  subscriber?: SubscriberSession;
}
