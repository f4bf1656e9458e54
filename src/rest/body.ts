import { MUST_BE, ValidationError, type ValidationDetails } from '../domain/errors';

// Shape checks at the REST edge: a JSON value of the wrong type cannot become a
// GraphQL variable, so it is reported here as the same 422 the domain would give.

export type FieldSpec =
  | { kind: 'string'; label: string }
  | { kind: 'strings'; label: string } // a string or an array of strings
  | { kind: 'integer'; label: string }
  | { kind: 'integers'; label: string }
  | { kind: 'enum'; label: string; values: Record<string, string>; message: string }
  | { kind: 'boolean'; label: string }
  // an object of boolean flags (Zendesk's capabilities): the listed keys are copied, others ignored
  | { kind: 'flags'; label: string; keys: readonly string[] };

/** The object inside `{"<wrapper>": {...}}` when present, else the body itself. */
export function unwrap(body: Record<string, unknown> | undefined, wrapper: string): Record<string, unknown> {
  if (!body) return {};
  const inner = body[wrapper];
  return inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : body;
}

/**
 * Copies the known fields (snake_case in, camelCase out) with their types
 * checked; unknown and read-only fields are dropped. `null` passes through.
 */
export function pickFields(body: Record<string, unknown>, spec: Record<string, FieldSpec & { to: string }>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const details: ValidationDetails = {};
  const bad = (field: string, description: string) => (details[field] ??= []).push({ error: 'InvalidValue', description });
  for (const [field, s] of Object.entries(spec)) {
    if (!Object.prototype.hasOwnProperty.call(body, field)) continue;
    const value = body[field];
    if (value === null) {
      out[s.to] = null;
      continue;
    }
    switch (s.kind) {
      case 'string':
        if (typeof value === 'string') out[s.to] = value;
        else bad(field, `${s.label}: ${MUST_BE.string}`);
        break;
      case 'strings':
        if (typeof value === 'string') out[s.to] = [value];
        else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) out[s.to] = value;
        else bad(field, `${s.label}: ${MUST_BE.strings}`);
        break;
      case 'integer':
        if (Number.isSafeInteger(value) && (value as number) > 0) out[s.to] = String(value);
        else bad(field, `${s.label}: ${MUST_BE.positiveInteger}`);
        break;
      case 'integers':
        if (Array.isArray(value) && value.every((v) => Number.isSafeInteger(v) && v > 0)) out[s.to] = value.map(String);
        else bad(field, `${s.label}: ${MUST_BE.positiveIntegers}`);
        break;
      case 'enum':
        if (typeof value === 'string' && Object.prototype.hasOwnProperty.call(s.values, value)) out[s.to] = s.values[value];
        else bad(field, `${s.label}: ${s.message}`);
        break;
      case 'boolean':
        if (typeof value === 'boolean') out[s.to] = value;
        else bad(field, `${s.label}: ${MUST_BE.boolean}`);
        break;
      case 'flags': {
        const flags = value as Record<string, unknown>;
        const given = typeof value === 'object' && !Array.isArray(value) ? s.keys.filter((k) => Object.prototype.hasOwnProperty.call(flags, k)) : undefined;
        if (given && given.every((k) => typeof flags[k] === 'boolean')) out[s.to] = Object.fromEntries(given.map((k) => [k, flags[k]]));
        else bad(field, `${s.label}: ${MUST_BE.flags} (${s.keys.join(', ')})`);
        break;
      }
    }
  }
  if (Object.keys(details).length) throw new ValidationError(details);
  return out;
}

/** ISO 8601 UTC with seconds, as Zendesk writes timestamps: 2026-11-21T10:29:59Z */
export function isoSeconds(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
