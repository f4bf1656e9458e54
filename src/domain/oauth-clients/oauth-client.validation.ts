import { MUST_BE, Validator } from '../errors';

export interface OAuthClientInput {
  name?: unknown;
  company?: unknown;
  clientType?: unknown;
  scopes?: unknown;
  redirectUris?: unknown;
}

export interface ValidOAuthClientFields {
  name?: string;
  company?: string | null;
  clientType?: 'public' | 'confidential';
  scopes?: string;
  redirectUris?: string[];
}

const MAX_URIS = 20;
const MAX_URI_LENGTH = 2000;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function label(field: string): string {
  return { name: 'Name', company: 'Company', client_type: 'Client type', scopes: 'Scopes', redirect_uris: 'Redirect uris' }[field] ?? field;
}

/** "read", "write", "read write" or "write read" (any whitespace) → normalized; else null. */
export function normalizeClientScopes(value: string): string | null {
  const parts = value.trim().split(/\s+/);
  const set = new Set(parts);
  if (parts.length === 0 || parts.length > 2 || set.size !== parts.length) return null;
  if (![...set].every((s) => s === 'read' || s === 'write')) return null;
  return ['read', 'write'].filter((s) => set.has(s)).join(' ');
}

/** Why a redirect URI is refused (RFC 6749 §3.1.2, RFC 8252 for native apps), or null if fine. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_URI_LENGTH) return `is too long (maximum is ${MAX_URI_LENGTH} characters)`;
  if (uri.includes('*')) return 'must not contain wildcards';
  // PostgreSQL text cannot hold NUL, and no URI contains control characters (RFC 3986).
  if ([...uri].some((c) => c < ' ' || c === '\u007f')) return 'must not contain control characters';
  if (uri.includes('#')) return 'must not contain a fragment';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return url.hostname ? null : 'must name a host';
  if (scheme === 'http') return LOOPBACK.has(url.hostname) ? null : 'may use http only for localhost, 127.0.0.1 or [::1]';
  // Private-use schemes of native apps (com.example.app:/cb); never script-capable ones.
  if (['javascript', 'data', 'file', 'vbscript', 'blob', 'about'].includes(scheme)) return `must not use the ${scheme} scheme`;
  return /^[a-z][a-z0-9+.-]*$/.test(scheme) ? null : 'must be an absolute URI';
}

/**
 * Checks the writable fields of a client. `partial` (update): absent fields are
 * left alone, present ones must still be valid.
 */
export function validateOAuthClient(input: OAuthClientInput, partial: boolean): ValidOAuthClientFields {
  const v = new Validator();
  const out: ValidOAuthClientFields = {};
  const blank = (field: string) => v.add(field, 'BlankValue', `${label(field)}: cannot be blank`);
  const invalid = (field: string, why: string) => v.add(field, 'InvalidValue', `${label(field)}: ${why}`);

  if (input.name !== undefined || !partial) {
    if (input.name === undefined || input.name === null) blank('name');
    else if (typeof input.name !== 'string') invalid('name', MUST_BE.string);
    else if (!input.name.trim()) blank('name');
    else if (input.name.includes('\0')) invalid('name', 'must not contain NUL characters');
    else if (input.name.trim().length > 255) v.add('name', 'TooLong', 'Name: is too long (maximum is 255 characters)');
    else out.name = input.name.trim();
  }

  if (input.company !== undefined) {
    if (input.company === null) out.company = null;
    else if (typeof input.company !== 'string') invalid('company', MUST_BE.string);
    else if (input.company.includes('\0')) invalid('company', 'must not contain NUL characters');
    else if (input.company.trim().length > 255) v.add('company', 'TooLong', 'Company: is too long (maximum is 255 characters)');
    else out.company = input.company.trim() || null;
  }

  if (input.clientType !== undefined && input.clientType !== null) {
    if (input.clientType === 'public' || input.clientType === 'confidential') out.clientType = input.clientType;
    else invalid('client_type', MUST_BE.clientType);
  } else if (!partial) {
    out.clientType = 'public';
  }

  if (input.scopes !== undefined || !partial) {
    if (input.scopes === undefined || input.scopes === null || input.scopes === '') blank('scopes');
    else if (typeof input.scopes !== 'string') invalid('scopes', MUST_BE.string);
    else {
      const normalized = normalizeClientScopes(input.scopes);
      if (normalized) out.scopes = normalized;
      else invalid('scopes', 'must be "read", "write" or "read write"');
    }
  }

  if (input.redirectUris !== undefined || !partial) {
    const raw = input.redirectUris;
    const list = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : undefined;
    if (raw === undefined || raw === null) blank('redirect_uris');
    else if (!list || !list.every((u) => typeof u === 'string')) invalid('redirect_uris', MUST_BE.strings);
    else {
      // Each entry may itself hold several URIs separated by whitespace.
      const uris = list.flatMap((u) => (u as string).split(/\s+/)).filter(Boolean);
      if (uris.length === 0) blank('redirect_uris');
      else if (uris.length > MAX_URIS) v.add('redirect_uris', 'TooLong', `Redirect uris: at most ${MAX_URIS} are allowed`);
      else {
        for (const uri of uris) {
          const problem = redirectUriProblem(uri);
          if (problem) invalid('redirect_uris', `${uri.length > 100 ? uri.slice(0, 100) + '…' : uri} ${problem}`);
        }
        if (!v.has('redirect_uris')) out.redirectUris = [...new Set(uris)];
      }
    }
  }

  v.throwIfAny();
  return out;
}
