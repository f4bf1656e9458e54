import type { Role } from '../auth/viewer';
import { ValidationError, type Validator } from '../errors';
import { textField } from './acting';

// The rules of a user's fields, and the validation errors of the user services.

export const ROLES: readonly Role[] = ['admin', 'agent', 'end_user'];
const PASSWORD_MIN = 8;
const PASSWORD_MAX = 1024;

export function roleField(v: Validator, raw: unknown): Role | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && (ROLES as readonly string[]).includes(raw)) return raw as Role;
  v.add('role', 'InvalidValue', `Role: must be one of ${ROLES.join(', ')}`);
  return undefined;
}

export function emailField(v: Validator, raw: unknown, required: boolean): string | undefined {
  const email = textField(v, 'email', 'Email', raw, { required, max: 254 });
  if (email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    v.add('email', 'InvalidValue', `Email: ${email} is not properly formatted`);
    return undefined;
  }
  return email ?? undefined;
}

export function passwordField(v: Validator, field: string, label: string, raw: unknown, required: boolean): string | undefined {
  if (raw === undefined || raw === null) {
    if (required) v.add(field, 'BlankValue', `${label}: cannot be blank`);
    return undefined;
  }
  if (typeof raw !== 'string') v.add(field, 'InvalidValue', `${label}: must be a string`);
  else if (raw.length < PASSWORD_MIN) v.add(field, 'InvalidValue', `${label}: must be at least ${PASSWORD_MIN} characters`);
  else if (raw.length > PASSWORD_MAX) v.add(field, 'TooLong', `${label}: is too long (maximum is ${PASSWORD_MAX} characters)`);
  else return raw;
  return undefined;
}

export const emailTaken = (email: string) => new ValidationError({ email: [{ error: 'InvalidValue', description: `Email: ${email} is already being used by another user` }] });

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

export function lastAdmin(field: 'role' | 'active'): ValidationError {
  const what = field === 'role' ? 'demoted' : 'deactivated or deleted';
  return new ValidationError({
    [field]: [{ error: 'InvalidValue', description: `${field === 'role' ? 'Role' : 'Active'}: the last active admin of the account cannot be ${what}` }],
  });
}

/** "1 token", "3 tokens": the counts in audit descriptions. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
