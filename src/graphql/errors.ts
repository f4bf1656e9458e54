import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { HeaderMap, type ApolloServerPlugin, type BaseContext, type GraphQLRequestListener } from '@apollo/server';
import { asDomainError, ERROR_KINDS, retryAfterOf, UnauthenticatedError, type DomainError, type ErrorCode, type ValidationError } from '../domain/errors';

/** Codes Apollo itself produces for malformed operations: safe to show as they are. */
const APOLLO_CODES = new Set([
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED', 'OPERATION_RESOLUTION_FAILURE',
]);

/**
 * GraphQL's wire shape for each kind of the catalogue (docs/api.md "Errors"): the
 * one table from a domain error to `extensions`. `code` is the kind itself; an
 * error with a Retry-After also carries it as `extensions.retryAfter`. The HTTP
 * status, where GraphQL answers with one, is the kind's (domain/errors.ts).
 */
const EXTENSIONS: Record<ErrorCode, (err: DomainError) => Record<string, unknown>> = {
  BAD_REQUEST: () => ({}),
  UNAUTHENTICATED: () => ({}),
  FORBIDDEN: () => ({}),
  NOT_FOUND: () => ({}),
  CONFLICT: () => ({}),
  BAD_USER_INPUT: (err) => ({ details: (err as ValidationError).details }),
  RATE_LIMITED: () => ({}),
  SERVICE_UNAVAILABLE: () => ({}),
};

function domainExtensions(err: DomainError): Record<string, unknown> {
  const retryAfter = retryAfterOf(err);
  return { code: err.code, ...EXTENSIONS[err.code](err), ...(retryAfter === undefined ? {} : { retryAfter }) };
}

/**
 * For errors raised while building the context (authentication): Apollo uses
 * extensions.http for the response status and headers.
 */
export function contextError(err: DomainError): GraphQLError {
  const headers = new HeaderMap();
  const retryAfter = retryAfterOf(err);
  if (err instanceof UnauthenticatedError) headers.set('www-authenticate', err.scheme === 'Bearer' ? 'Bearer error="invalid_token"' : 'Basic realm="api"');
  if (retryAfter !== undefined) headers.set('retry-after', String(retryAfter));
  return new GraphQLError(err.message, { originalError: err, extensions: { ...domainExtensions(err), http: { status: err.status, headers } } });
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
    const domain = asDomainError(cause);
    if (domain) return { ...base, message: domain.message, extensions: domainExtensions(domain) };
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
    const unavailable = response.body.singleResult.errors?.find((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE');
    if (unavailable) {
      response.http.status = ERROR_KINDS.SERVICE_UNAVAILABLE.status;
      response.http.headers.set('retry-after', String(unavailable.extensions!.retryAfter));
    }
  },
};
