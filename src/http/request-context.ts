import type { FastifyRequest } from 'fastify';
import type { Services } from '../domain/services';
import type { GraphQLContext } from '../graphql/context';
import { Loaders } from '../graphql/loaders';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The base of absolute URLs (and the OAuth issuer): PUBLIC_URL, or the request's scheme and host. */
export function baseUrlOf(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * The one place a request becomes a context: authentication (and impersonation)
 * happens here, for GraphQL and REST alike. Throws the domain's auth errors.
 */
export function createContextBuilder(services: Services, publicUrl: string | undefined) {
  return async (request: FastifyRequest): Promise<GraphQLContext> => {
    const viewer = await services.authenticator.authenticate({
      authorization: header(request, 'authorization'),
      onBehalfOf: header(request, 'x-on-behalf-of'),
    });
    return {
      viewer,
      services,
      baseUrl: baseUrlOf(request, publicUrl),
      loaders: viewer ? new Loaders(services, viewer) : null,
    };
  };
}

export type ContextBuilder = ReturnType<typeof createContextBuilder>;
