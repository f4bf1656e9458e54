import { retryAfterOf, UnauthenticatedError, type DomainError, type ErrorCode } from '../../domain/errors';

const REFUSED = 'This request cannot be authorized';
const LATER = 'Please try again';

/**
 * What a person reads on the authorization pages for each kind of error
 * (domain/errors.ts): the one table from a domain error to a page. No `message`:
 * the error's own. The status and Retry-After are the kind's.
 */
const PAGE_ERRORS: Record<ErrorCode, { title: string; message?: string }> = {
  BAD_REQUEST: { title: REFUSED },
  UNAUTHENTICATED: { title: REFUSED, message: 'Wrong email or password.' },
  FORBIDDEN: { title: REFUSED },
  NOT_FOUND: { title: REFUSED },
  CONFLICT: { title: REFUSED },
  BAD_USER_INPUT: { title: REFUSED },
  RATE_LIMITED: { title: LATER, message: 'Too many attempts. Please wait a few minutes and try again.' },
  SERVICE_UNAVAILABLE: { title: LATER, message: 'The service is busy. Please try again in a moment.' },
};

export interface PageError {
  status: number;
  headers: Record<string, string>;
  title: string;
  message: string;
}

export function pageErrorFor(err: DomainError): PageError {
  const shown = PAGE_ERRORS[err.code];
  const retryAfter = retryAfterOf(err);
  return {
    status: err.status,
    headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
    title: shown.title,
    message: shown.message ?? err.message,
  };
}

/**
 * On the login form, a refused sign-in reads "wrong email or password" whatever
 * the reason, so that it tells nothing about the account; unless trying again
 * later helps (the kind has a Retry-After), which the person is told.
 */
export function loginErrorFor(err: DomainError): PageError {
  return pageErrorFor(retryAfterOf(err) === undefined ? new UnauthenticatedError() : err);
}
