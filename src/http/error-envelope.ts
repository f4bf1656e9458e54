import {
  asDomainError, BadRequestError, NotFoundError, RateLimitedError, retryAfterOf, UnauthenticatedError,
  type DomainError, type ErrorCode, type ValidationError,
} from '../domain/errors';

export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

type Envelope = { error: string; description?: string; details?: unknown };

/**
 * Zendesk's error envelope for each kind of the catalogue (docs/api.md "Errors"):
 * the one table from a domain error to a REST body. The status and Retry-After
 * come from the kind (domain/errors.ts).
 */
const ENVELOPES: Record<ErrorCode, (err: DomainError) => Envelope> = {
  BAD_REQUEST: (err) => ({ error: 'InvalidRequest', description: err.message }),
  UNAUTHENTICATED: () => ({ error: "Couldn't authenticate you" }),
  FORBIDDEN: () => ({ error: 'Forbidden', description: 'You do not have access to this resource' }),
  NOT_FOUND: () => ({ error: 'RecordNotFound', description: 'Not found' }),
  CONFLICT: (err) => ({ error: 'Conflict', description: err.message }),
  BAD_USER_INPUT: (err) => ({ error: 'RecordInvalid', description: 'Record validation errors', details: (err as ValidationError).details }),
  RATE_LIMITED: (err) => ({ error: 'TooManyRequests', description: err.message }),
  SERVICE_UNAVAILABLE: () => ({ error: 'ServiceUnavailable', description: 'The service is temporarily unavailable; try again shortly' }),
};

/** The headers some errors carry beside Retry-After: the challenge of a 401, the budget of a rate limit. */
function extraHeaders(err: DomainError): Record<string, string> {
  if (err instanceof UnauthenticatedError) return { 'www-authenticate': err.scheme === 'Bearer' ? 'Bearer error="invalid_token"' : 'Basic realm="api"' };
  if (err instanceof RateLimitedError && err.limit !== undefined) return { 'x-rate-limit': String(err.limit), 'x-rate-limit-remaining': '0' };
  return {};
}

/** The REST answer to an error of the catalogue (or a database out of reach); undefined for anything else (a bug). */
export function envelopeFor(error: unknown): ErrorResponse | undefined {
  const err = asDomainError(error);
  if (!err) return undefined;
  const retryAfter = retryAfterOf(err);
  const headers = { ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }), ...extraHeaders(err) };
  return { status: err.status, body: ENVELOPES[err.code](err), ...(Object.keys(headers).length ? { headers } : {}) };
}

export const notFound = (): ErrorResponse => envelopeFor(new NotFoundError())!;
export const badRequest = (description: string): ErrorResponse => envelopeFor(new BadRequestError(description))!;
export const internalError = (): ErrorResponse => ({ status: 500, body: { error: 'InternalError', description: 'Internal error' } });
