// The errors of the OAuth 2.0 protocol endpoints (RFC 6749 §4.1.2.1 and §5.2,
// RFC 7009 §2.2.1). They are not the API's catalogue (domain/errors.ts): their
// codes and shapes are fixed by the RFCs, and only the oauth-server plugin and
// the authorization pages answer with them. As in node-oidc-provider, each is a
// class that carries its code and HTTP status. An error of the API's catalogue
// met on the way (the database out of reach) becomes one of these by its kind,
// in oauthErrorFor's table.

import { retryAfterOf, type DomainError, type ErrorCode } from '../errors';

export abstract class OAuthError extends Error {
  abstract readonly error: string;
  readonly status: number = 400;
  /** seconds for Retry-After, when waiting helps */
  readonly retryAfter?: number;
  constructor(readonly description: string) {
    super(description);
  }

  /** RFC 6749 §5.2 body */
  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

export class InvalidRequestError extends OAuthError {
  readonly error = 'invalid_request';
}

/**
 * Client authentication failed. 401 with a WWW-Authenticate challenge when the
 * client tried HTTP Basic (RFC 6749 §5.2); 400 otherwise, since a 401 must carry
 * a challenge and a client that sent its credentials in the body asked for none.
 */
export class InvalidClientError extends OAuthError {
  readonly error = 'invalid_client';
  readonly status: number;
  constructor(description: string, readonly viaBasic: boolean) {
    super(description);
    this.status = viaBasic ? 401 : 400;
  }
}

export class InvalidGrantError extends OAuthError {
  readonly error = 'invalid_grant';
}

export class UnauthorizedClientError extends OAuthError {
  readonly error = 'unauthorized_client';
}

export class UnsupportedGrantTypeError extends OAuthError {
  readonly error = 'unsupported_grant_type';
}

export class InvalidScopeError extends OAuthError {
  readonly error = 'invalid_scope';
}

/** Authorization endpoint only (RFC 6749 §4.1.2.1). */
export class UnsupportedResponseTypeError extends OAuthError {
  readonly error = 'unsupported_response_type';
}

export class AccessDeniedError extends OAuthError {
  readonly error = 'access_denied';
}

export class ServerError extends OAuthError {
  readonly error = 'server_error';
  readonly status = 500;
}

/** Try again later: the status and Retry-After (seconds) are those of the kind of error behind it. */
class TemporarilyUnavailableError extends OAuthError {
  readonly error = 'temporarily_unavailable';
  constructor(description: string, readonly status: number, readonly retryAfter: number | undefined) {
    super(description);
  }
}

/**
 * The RFC 6749 answer to each kind of the catalogue (domain/errors.ts). `null`:
 * the OAuth endpoints never raise that kind (they raise the errors above), so
 * meeting it is a bug, answered server_error.
 */
const FROM_KIND: Record<ErrorCode, ((err: DomainError) => OAuthError) | null> = {
  BAD_REQUEST: (err) => new InvalidRequestError(err.message),
  UNAUTHENTICATED: null,
  FORBIDDEN: null,
  NOT_FOUND: null,
  CONFLICT: null,
  BAD_USER_INPUT: null,
  RATE_LIMITED: (err) => new TemporarilyUnavailableError('Too many requests; try again later', err.status, retryAfterOf(err)),
  SERVICE_UNAVAILABLE: (err) => new TemporarilyUnavailableError('Try again shortly', err.status, retryAfterOf(err)),
};

/** The protocol error for a domain error, or undefined when there is none (a bug). */
export function oauthErrorFor(err: DomainError): OAuthError | undefined {
  return FROM_KIND[err.code]?.(err);
}

/**
 * A limit on what one user or client may hold live (docs/api.md): invalid_request,
 * with 429 and Retry-After at the grant endpoint when the time a slot frees is known.
 */
export class LiveLimitError extends InvalidRequestError {
  readonly status: number;
  constructor(description: string, readonly retryAfter?: number) {
    super(description);
    this.status = retryAfter === undefined ? 400 : 429;
  }
}
