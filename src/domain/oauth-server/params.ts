import { InvalidRequestError } from './oauth-errors';

/**
 * The parameters of a protocol request: a JSON object (Zendesk) or a form
 * (RFC 6749), where a repeated name arrives as an array. Anything is possible
 * here; every reader below turns a wrong shape into invalid_request.
 */
export type Params = Record<string, unknown>;

const MAX_PARAM_LENGTH = 4096;

/** A single string parameter; undefined when absent or empty (RFC 6749 §3.1: empty = omitted). */
export function param(params: Params, name: string): string | undefined {
  if (!Object.prototype.hasOwnProperty.call(params, name)) return undefined;
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) throw new InvalidRequestError(`Parameter ${name} must not be repeated`);
  if (typeof value !== 'string') throw new InvalidRequestError(`Parameter ${name} must be a string`);
  if (value.length > MAX_PARAM_LENGTH || value.includes('\0')) throw new InvalidRequestError(`Parameter ${name} is invalid`);
  return value;
}

export function requiredParam(params: Params, name: string): string {
  const value = param(params, name);
  if (value === undefined) throw new InvalidRequestError(`Parameter ${name} is required`);
  return value;
}

/**
 * A lifetime in seconds, strictly between `min` and `max` as Zendesk bounds them;
 * a JSON number or a string of digits. Absent: the default.
 */
export function lifetimeParam(params: Params, name: string, bounds: { min: number; max: number; fallback: number }): number {
  const raw = params[name];
  if (raw === undefined || raw === null || raw === '') return bounds.fallback;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n <= bounds.min || n >= bounds.max) {
    throw new InvalidRequestError(`Parameter ${name} must be an integer number of seconds greater than ${bounds.min} and less than ${bounds.max}`);
  }
  return n;
}
