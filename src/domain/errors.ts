// The one catalogue of expected failures. GraphQL maps `code` to
// extensions.code, REST maps it to a status and Zendesk's envelope.

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE';

export type DetailCode = 'BlankValue' | 'InvalidValue' | 'NotFound' | 'TooLong';
export type ValidationDetails = Record<string, { error: DetailCode; description: string }[]>;

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
}

export class BadRequestError extends DomainError {
  readonly code = 'BAD_REQUEST' as const;
}

export class UnauthenticatedError extends DomainError {
  readonly code = 'UNAUTHENTICATED' as const;
  /** which WWW-Authenticate challenge to send */
  constructor(readonly scheme: 'Basic' | 'Bearer' = 'Basic') {
    super("Couldn't authenticate you");
  }
}

export class ForbiddenError extends DomainError {
  readonly code = 'FORBIDDEN' as const;
  constructor() {
    super('You do not have access to this resource');
  }
}

export class NotFoundError extends DomainError {
  readonly code = 'NOT_FOUND' as const;
  constructor() {
    super('Not found');
  }
}

export class ValidationError extends DomainError {
  readonly code = 'BAD_USER_INPUT' as const;
  constructor(readonly details: ValidationDetails) {
    super('Record validation errors');
  }
}

export class RateLimitedError extends DomainError {
  readonly code = 'RATE_LIMITED' as const;
  /** `limit`: the budget of the window, sent as X-Rate-Limit where the endpoint advertises it */
  constructor(readonly retryAfter: number, message = 'Too many requests', readonly limit?: number) {
    super(message);
  }
}

export class ServiceUnavailableError extends DomainError {
  readonly code = 'SERVICE_UNAVAILABLE' as const;
  /** `retryAfter`: seconds for the Retry-After header, when the cause knows better than the default */
  constructor(readonly retryAfter?: number) {
    super('The service is temporarily unavailable');
  }
}

/**
 * The wording of "wrong type" field errors, shared by the domain validators and
 * the REST edge (which must reject a JSON value that cannot become a GraphQL
 * variable with the same 422 the domain would give).
 */
export const MUST_BE = {
  string: 'must be a string',
  strings: 'must be a string or an array of strings',
  stringArray: 'must be an array of strings',
  positiveInteger: 'must be a positive integer',
  positiveIntegers: 'must be an array of positive integers',
  clientType: 'must be "public" or "confidential"',
  boolean: 'must be true or false',
  flags: 'must be an object of true/false flags',
} as const;

/** Collects field errors and throws them together, so a user sees every problem at once. */
export class Validator {
  private readonly details: ValidationDetails = {};

  add(field: string, error: DetailCode, description: string): void {
    (this.details[field] ??= []).push({ error, description });
  }

  has(field: string): boolean {
    return field in this.details;
  }

  isEmpty(): boolean {
    return Object.keys(this.details).length === 0;
  }

  throwIfAny(): void {
    if (!this.isEmpty()) throw new ValidationError(this.details);
  }
}
