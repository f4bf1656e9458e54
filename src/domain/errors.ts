import { isDatabaseUnavailable } from '../db/errors';

// The one catalogue of expected failures. Each kind is written here once, with
// what it means over HTTP: its status, and how long a client should wait before
// trying again (Retry-After) when waiting helps. Each protocol turns a kind into
// its own wire shape in one table: REST's envelope (http/error-envelope.ts),
// GraphQL's extensions (graphql/errors.ts), the OAuth endpoints' RFC 6749 errors
// (domain/oauth-server/oauth-errors.ts) and the authorization pages
// (http/pages/page-errors.ts).

/** Seconds a client waits when the database cannot be reached: about pg's connect timeout (db/create-db.ts). */
export const DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'BAD_USER_INPUT'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE';

export interface ErrorKind {
  status: number;
  /** default Retry-After in seconds; absent when waiting does not help */
  retryAfter?: number;
}

export const ERROR_KINDS: Readonly<Record<ErrorCode, ErrorKind>> = {
  BAD_REQUEST: { status: 400 },
  UNAUTHENTICATED: { status: 401 },
  FORBIDDEN: { status: 403 },
  NOT_FOUND: { status: 404 },
  /** the resource is in a state that forbids the request; its message says what to do */
  CONFLICT: { status: 409 },
  BAD_USER_INPUT: { status: 422 },
  /** retryAfter: always the cause's own (the time until its window lets a request through) */
  RATE_LIMITED: { status: 429 },
  /** retryAfter: the database's unless the cause knows better (a full password-verification queue) */
  SERVICE_UNAVAILABLE: { status: 503, retryAfter: DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS },
};

export type DetailCode = 'BlankValue' | 'InvalidValue' | 'NotFound' | 'TooLong';
export type ValidationDetails = Record<string, { error: DetailCode; description: string }[]>;

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
  /** seconds for Retry-After, when this cause knows better than its kind (see retryAfterOf) */
  readonly retryAfter?: number;

  /** the HTTP status of this kind of error */
  get status(): number {
    return ERROR_KINDS[this.code].status;
  }
}

/** What Retry-After says for an error: the cause's own figure, else its kind's; undefined when waiting does not help. */
export function retryAfterOf(err: DomainError): number | undefined {
  return err.retryAfter ?? ERROR_KINDS[err.code].retryAfter;
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

/** The request is valid, but the resource's state forbids it; the message says why and what to do. */
export class ConflictError extends DomainError {
  readonly code = 'CONFLICT' as const;
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
 * The domain error an error stands for, or undefined for a bug. A database that
 * cannot be reached is SERVICE_UNAVAILABLE here, once, for every protocol.
 */
export function asDomainError(err: unknown): DomainError | undefined {
  if (err instanceof DomainError) return err;
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError();
  return undefined;
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
  integer: 'must be a whole number',
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
