import type { Services } from '../domain/services';
import type { Viewer } from '../domain/auth/viewer';

export interface GraphQLContext {
  viewer: Viewer | null;
  services: Services;
  /** scheme://host of the request, or PUBLIC_URL: the base of url fields */
  baseUrl: string;
}
