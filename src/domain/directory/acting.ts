import { actorOf, type AuditActor } from '../audit/audit-log.repository';
import type { AccountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import type { DetailCode, Validator } from '../errors';

// Who a directory change is made by: a request's viewer (REST, GraphQL), or the
// system (the CLI passes systemActor(accountId), bootstrap systemActor(accountId,
// { via: 'system' })). Either way the change acts in one account, and its audit
// record names the actor.

export type Acting = Viewer | AuditActor;

export function isViewer(acting: Acting): acting is Viewer {
  return 'userId' in acting && 'role' in acting;
}

export function auditActorOf(acting: Acting): AuditActor {
  return isViewer(acting) ? actorOf(acting) : acting;
}

export function scopeOf(acting: Acting): AccountScope {
  return { accountId: acting.accountId };
}

/**
 * A text field: absent (undefined) stays absent; otherwise a string, trimmed,
 * within `max` characters, without NUL (PostgreSQL text cannot hold it), and not
 * blank when `required`. Problems go to the validator under `field`.
 */
export function textField(
  v: Validator,
  field: string,
  label: string,
  raw: unknown,
  opts: { required: boolean; max: number; nullable?: boolean },
): string | null | undefined {
  const blank = (code: DetailCode = 'BlankValue') => v.add(field, code, `${label}: cannot be blank`);
  if (raw === undefined) {
    if (opts.required) blank();
    return undefined;
  }
  if (raw === null) {
    if (opts.nullable) return null;
    blank();
    return undefined;
  }
  if (typeof raw !== 'string') {
    v.add(field, 'InvalidValue', `${label}: must be a string`);
    return undefined;
  }
  const value = raw.trim();
  if (value.includes('\u0000')) v.add(field, 'InvalidValue', `${label}: must not contain NUL characters`);
  else if (value.length > opts.max) v.add(field, 'TooLong', `${label}: is too long (maximum is ${opts.max} characters)`);
  else if (value === '' && opts.required) blank();
  else if (value === '' && opts.nullable) return null;
  else return value;
  return undefined;
}

/** A boolean field: absent stays absent; anything but true/false is InvalidValue. */
export function booleanField(v: Validator, field: string, label: string, raw: unknown): boolean | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'boolean') return raw;
  v.add(field, 'InvalidValue', `${label}: must be true or false`);
  return undefined;
}

/** Names of the fields whose new value differs from the current one, in the given order. */
export function changedFields<T extends object>(current: T, changes: Partial<T>, names: Record<string, keyof T>): string[] {
  return Object.entries(names)
    .filter(([, key]) => changes[key] !== undefined && changes[key] !== current[key])
    .map(([name]) => name);
}
