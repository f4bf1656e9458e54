import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { HeaderMap, type ApolloServerPlugin, type BaseContext, type GraphQLRequestListener } from '@apollo/server';
import { DomainError, RateLimitedError, ServiceUnavailableError, UnauthenticatedError, ValidationError } from '../domain/errors';
import { isDatabaseUnavailable } from '../db/errors';

/** Codes Apollo itself produces for malformed operations: safe to show as they are. */
const APOLLO_CODES = new Set([
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED', 'OPERATION_RESOLUTION_FAILURE',
]);

function domainExtensions(err: DomainError): Record<string, unknown> {
  const extensions: Record<string, unknown> = { code: err.code };
  if (err instanceof ValidationError) extensions.details = err.details;
  if (err instanceof RateLimitedError) extensions.retryAfter = err.retryAfter;
  return extensions;
}

/**
 * For errors raised while building the context (authentication): Apollo uses
 * extensions.http for the response status and headers.
 */
export function contextError(err: DomainError): GraphQLError {
  const headers = new HeaderMap();
  let status = 400;
  if (err instanceof UnauthenticatedError) {
    status = 401;
    headers.set('www-authenticate', err.scheme === 'Bearer' ? 'Bearer error="invalid_token"' : 'Basic realm="api"');
  } else if (err instanceof RateLimitedError) {
    status = 429;
    headers.set('retry-after', String(err.retryAfter));
  } else if (err.code === 'FORBIDDEN') {
    status = 403;
  } else if (err.code === 'SERVICE_UNAVAILABLE') {
    status = 503;
    if (err instanceof ServiceUnavailableError && err.retryAfter !== undefined) headers.set('retry-after', String(err.retryAfter));
  }
  return new GraphQLError(err.message, { originalError: err, extensions: { ...domainExtensions(err), http: { status, headers } } });
}

/**
 * The errors a client sees. `hideSuggestions`: drop graphql-js's "Did you mean …?"
 * (it names fields, arguments and values of the schema) when introspection is off.
 * Done here, where only errors pass, rather than by Apollo's
 * hideSchemaDetailsFromClientErrors, whose plugin listens on every request.
 */
export function createFormatError(logError: (err: unknown) => void, options: { hideSuggestions?: boolean } = {}) {
  const shown = (message: string) => (options.hideSuggestions ? message.replace(/ ?Did you mean(.+?)\?$/, '') : message);
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const cause = original instanceof GraphQLError && original.originalError ? original.originalError : original;
    const base = { locations: formatted.locations, path: formatted.path };
    if (cause instanceof DomainError) return { ...base, message: cause.message, extensions: domainExtensions(cause) };
    if (isDatabaseUnavailable(cause)) {
      return { ...base, message: 'The service is temporarily unavailable', extensions: { code: 'SERVICE_UNAVAILABLE' } };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && APOLLO_CODES.has(code)) return { ...base, message: shown(formatted.message), extensions: { code } };
    // Apollo refuses some requests with a bare GraphQLError and an HTTP 4xx but no code
    // (a persisted-query hash that does not match the query, an unsupported version).
    const http = original instanceof GraphQLError && !original.originalError ? (original.extensions?.http as { status?: number } | undefined) : undefined;
    if (http?.status && http.status >= 400 && http.status < 500) return { ...base, message: formatted.message, extensions: { code: 'BAD_REQUEST' } };
    logError(cause);
    return { ...base, message: 'Internal error', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}

/**
 * The HTTP head of every GraphQL answer, from one shared listener (each plugin
 * listener costs every request a few promises per phase):
 * - `Cache-Control: no-store`: answers are per viewer. (Apollo's cache-control
 *   plugin, which hooked every resolved field, is off; this is what it sent.)
 * - 503 with Retry-After when a resolver could not reach the database, like REST
 *   and /readyz, so that load balancers and clients retry instead of caching an
 *   error. The body keeps the GraphQL shape with code SERVICE_UNAVAILABLE.
 */
export const responseHead: ApolloServerPlugin = {
  async requestDidStart() {
    return responseHeadListener;
  },
};
const responseHeadListener: GraphQLRequestListener<BaseContext> = {
  async willSendResponse({ response, contextValue }) {
    if (!response.http.headers.has('cache-control')) response.http.headers.set('cache-control', 'no-store');
    if (response.body.kind !== 'single') return;
    if ((contextValue as { objects?: { exceeded: boolean } }).objects?.exceeded) {
      // stopped while running (graphql/limits.ts): the partial answer is dropped, as if refused before
      response.http.status = 400;
      response.body.singleResult.data = null;
      return;
    }
    const errors = response.body.singleResult.errors;
    if (errors?.some((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE')) {
      response.http.status = 503;
      response.http.headers.set('retry-after', '1');
    }
  },
};
