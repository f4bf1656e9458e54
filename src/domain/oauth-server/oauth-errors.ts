// The errors of the OAuth 2.0 protocol endpoints (RFC 6749 §4.1.2.1 and §5.2,
// RFC 7009 §2.2.1). They are not the API's catalogue (domain/errors.ts): their
// codes and shapes are fixed by the RFCs, and only the oauth-server plugin and
// the authorization pages answer with them. As in node-oidc-provider, each is a
// class that carries its code and HTTP status.

export abstract class OAuthError extends Error {
  abstract readonly error: string;
  readonly status: number = 400;
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

export class TemporarilyUnavailableError extends OAuthError {
  readonly error = 'temporarily_unavailable';
  readonly status = 503;
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
