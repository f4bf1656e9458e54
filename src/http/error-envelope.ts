import { DomainError, RateLimitedError, ServiceUnavailableError, UnauthenticatedError, ValidationError } from '../domain/errors';
import { isDatabaseUnavailable } from '../db/errors';

export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Zendesk's error envelope (docs/api.md, "Errors"), the one mapping from our error catalogue to HTTP. */
export function envelopeFor(err: unknown): ErrorResponse | undefined {
  if (err instanceof UnauthenticatedError) {
    return {
      status: 401,
      body: { error: "Couldn't authenticate you" },
      headers: { 'www-authenticate': err.scheme === 'Bearer' ? 'Bearer error="invalid_token"' : 'Basic realm="api"' },
    };
  }
  if (err instanceof ValidationError) {
    return { status: 422, body: { error: 'RecordInvalid', description: 'Record validation errors', details: err.details } };
  }
  if (err instanceof RateLimitedError) {
    const budget: Record<string, string> = err.limit === undefined ? {} : { 'x-rate-limit': String(err.limit), 'x-rate-limit-remaining': '0' };
    return { status: 429, body: { error: 'TooManyRequests', description: err.message }, headers: { 'retry-after': String(err.retryAfter), ...budget } };
  }
  if (err instanceof DomainError) {
    switch (err.code) {
      case 'FORBIDDEN':
        return { status: 403, body: { error: 'Forbidden', description: 'You do not have access to this resource' } };
      case 'NOT_FOUND':
        return notFound();
      case 'BAD_REQUEST':
        return badRequest(err.message);
      case 'SERVICE_UNAVAILABLE':
        return unavailable(err instanceof ServiceUnavailableError ? err.retryAfter : undefined);
    }
  }
  if (isDatabaseUnavailable(err)) return unavailable();
  return undefined;
}

export const notFound = (): ErrorResponse => ({ status: 404, body: { error: 'RecordNotFound', description: 'Not found' } });
export const badRequest = (description: string): ErrorResponse => ({ status: 400, body: { error: 'InvalidRequest', description } });
export const internalError = (): ErrorResponse => ({ status: 500, body: { error: 'InternalError', description: 'Internal error' } });
const unavailable = (retryAfter = 5): ErrorResponse => ({
  status: 503,
  body: { error: 'ServiceUnavailable', description: 'The service is temporarily unavailable; try again shortly' },
  headers: { 'retry-after': String(retryAfter) },
});
