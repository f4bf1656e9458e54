import { MUST_BE, Validator } from '../errors';

export interface OAuthClientInput {
  name?: unknown;
  company?: unknown;
  clientType?: unknown;
  scopes?: unknown;
  redirectUris?: unknown;
  clientIdentifier?: unknown;
  description?: unknown;
  logoUrl?: unknown;
}

export interface ValidOAuthClientFields {
  name?: string;
  company?: string | null;
  clientType?: 'public' | 'confidential';
  scopes?: string;
  redirectUris?: string[];
  /** only on create (an identifier is immutable): the caller's choice; absent → generated */
  identifier?: string;
  description?: string | null;
  logoUrl?: string | null;
}

/** A caller-chosen client identifier (Zendesk Support's "identifier"): the OAuth client_id. */
const CLIENT_IDENTIFIER = /^[A-Za-z0-9_.-]{1,100}$/;
const MAX_DESCRIPTION = 1024;
const MAX_LOGO_URL = 2048;
const MAX_URIS = 20;
const MAX_URI_LENGTH = 2000;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function label(field: string): string {
  return {
    name: 'Name', company: 'Company', client_type: 'Client type', scopes: 'Scopes', redirect_uris: 'Redirect uris',
    client_identifier: 'Client identifier', description: 'Description', logo_url: 'Logo url',
  }[field] ?? field;
}

/** "read", "write", "read write" or "write read" (any whitespace) → normalized; else null. */
function normalizeClientScopes(value: string): string | null {
  const parts = value.trim().split(/\s+/);
  const set = new Set(parts);
  if (parts.length === 0 || parts.length > 2 || set.size !== parts.length) return null;
  if (![...set].every((s) => s === 'read' || s === 'write')) return null;
  return ['read', 'write'].filter((s) => set.has(s)).join(' ');
}

// Characters no redirect URI may hold anywhere: controls (C0, DEL, C1 such as
// U+0085), whitespace of any kind, and invisible or format characters (Cf, lone
// surrogates, default-ignorables such as U+200B, U+FEFF, U+00AD). Bidi controls
// are a subset of these, reported on their own because they disguise a URI.
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const CONTROL = /\p{Cc}/u;
const WHITESPACE = /[\s\p{Z}]/u;
const INVISIBLE = /[\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;
/** RFC 8252 §7.1: a reverse domain name (at least one dot), lower-case. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(?:\.[a-z0-9+-]+)+$/;
const PORT = /^[1-9][0-9]{0,4}$/;
const ALLOWED = 'must use https://host/…, http:// on localhost, 127.0.0.1 or [::1], or a private-use scheme such as com.example.app:/cb';

/** Control, whitespace and invisible characters shown as \u{…} escapes, for error messages. */
function printableUri(uri: string): string {
  const shown = uri.length > 100 ? uri.slice(0, 100) + '…' : uri;
  return shown.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Z}\p{Default_Ignorable_Code_Point}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

/**
 * The authority of `scheme://authority/...` as written (up to the first / ? #),
 * split into host and port; a problem when it holds userinfo or a bad port.
 */
function writtenAuthority(uri: string, prefix: string): { host: string; port?: string } | string {
  const authority = uri.slice(prefix.length).split(/[/?#]/, 1)[0];
  if (authority.includes('@')) return 'must not contain user information';
  if (!authority) return 'must name a host';
  const bracket = authority.startsWith('[') ? authority.indexOf(']') + 1 : 0;
  const colon = authority.indexOf(':', bracket);
  const host = colon < 0 ? authority : authority.slice(0, colon);
  const port = colon < 0 ? undefined : authority.slice(colon + 1);
  if (!host) return 'must name a host';
  if (port !== undefined && !(PORT.test(port) && Number(port) <= 65535)) return 'must have a port between 1 and 65535';
  return { host, port };
}

/**
 * Why a redirect URI is refused, or null if fine (RFC 6749 §3.1.2, RFC 8252 §7):
 * `https://host[:port]/…` with the host as WHATWG parsing keeps it; `http://` only on
 * localhost, 127.0.0.1 or [::1] written exactly so; or a private-use scheme of a native
 * app (reverse domain name, `com.example.app:/cb`). No userinfo, fragment, wildcard,
 * backslash, whitespace, control, bidi or invisible character.
 */
/**
 * The rules of an http(s) URL (a redirect URI, a logo URL), parsed as `url`: written
 * `scheme://host…` as browsers keep it, no userinfo, `http` only on loopback.
 */
function webUrlProblem(uri: string, scheme: 'http' | 'https', url: URL): string | null {
  const prefix = `${scheme}://`;
  if (!uri.startsWith(prefix)) return `must be written ${prefix}host/…`;
  const written = writtenAuthority(uri, prefix);
  if (typeof written === 'string') return written;
  if (scheme === 'http') {
    return LOOPBACK.has(written.host) && url.hostname === written.host ? null : 'may use http only for localhost, 127.0.0.1 or [::1]';
  }
  // 2130706433, 0x7f.1, 127.1, %61pp.example.com, [0::1]…: the host a browser would
  // reach is not the one written. Only letter case may change.
  return url.hostname === written.host.toLowerCase() ? null : 'must write its host in canonical form';
}

function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_URI_LENGTH) return `is too long (maximum is ${MAX_URI_LENGTH} characters)`;
  // PostgreSQL text cannot hold NUL, and no URI contains control characters (RFC 3986).
  if (CONTROL.test(uri)) return 'must not contain control characters';
  if (BIDI_CONTROL.test(uri)) return 'must not contain bidirectional control characters';
  if (WHITESPACE.test(uri)) return 'must not contain whitespace';
  if (INVISIBLE.test(uri)) return 'must not contain invisible or format characters';
  if (uri.includes('*')) return 'must not contain wildcards';
  if (uri.includes('#')) return 'must not contain a fragment';
  // WHATWG reads \ as / in http(s) URLs: what the admin reads is not what a browser follows.
  if (uri.includes('\\')) return 'must not contain backslashes';
  const colon = uri.indexOf(':');
  if (colon <= 0 || /[/?]/.test(uri.slice(0, colon))) return 'must be an absolute URI';
  const scheme = uri.slice(0, colon);
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }

  const lower = scheme.toLowerCase();
  if (lower === 'https' || lower === 'http') return webUrlProblem(uri, lower, url);

  if (['javascript', 'data', 'file', 'vbscript', 'blob', 'about'].includes(lower)) return `must not use the ${lower} scheme`;
  if (!PRIVATE_USE_SCHEME.test(scheme)) return ALLOWED;
  // RFC 8252 §7.1: no naming authority, so a single slash follows the scheme.
  if (!/^\/(?!\/)/.test(uri.slice(colon + 1))) return `must be written ${scheme}:/path (one slash, no host)`;
  return null;
}

/**
 * Why a logo URL is refused, or null if fine: an absolute `https://host[:port]/…` URL
 * (`http://` only on localhost, 127.0.0.1 or [::1], as for redirect URIs), host written
 * as browsers keep it, no userinfo, no whitespace, control or invisible character.
 */
function logoUrlProblem(uri: string): string | null {
  if (uri.length > MAX_LOGO_URL) return `is too long (maximum is ${MAX_LOGO_URL} characters)`;
  if (CONTROL.test(uri)) return 'must not contain control characters';
  if (WHITESPACE.test(uri) || INVISIBLE.test(uri) || BIDI_CONTROL.test(uri)) return 'must not contain whitespace or invisible characters';
  if (uri.includes('\\')) return 'must not contain backslashes';
  const lower = uri.slice(0, Math.max(0, uri.indexOf(':'))).toLowerCase();
  if (lower !== 'https' && lower !== 'http') return 'must be an absolute https:// URL';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute https:// URL';
  }
  return webUrlProblem(uri, lower, url);
}

/** An optional text field: null, or "" after trimming, stores null. */
function optionalText(v: Validator, field: string, value: unknown, max: number): string | null | undefined {
  if (value === null) return null;
  if (typeof value !== 'string') v.add(field, 'InvalidValue', `${label(field)}: ${MUST_BE.string}`);
  else if (value.includes('\0')) v.add(field, 'InvalidValue', `${label(field)}: must not contain NUL characters`);
  else if (value.trim().length > max) v.add(field, 'TooLong', `${label(field)}: is too long (maximum is ${max} characters)`);
  else return value.trim() || null;
  return undefined;
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
    const c = optionalText(v, 'company', input.company, 255);
    if (c !== undefined) out.company = c;
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
          if (problem) invalid('redirect_uris', `${printableUri(uri)} ${problem}`);
        }
        if (!v.has('redirect_uris')) out.redirectUris = [...new Set(uris)];
      }
    }
  }

  if (input.clientIdentifier !== undefined && input.clientIdentifier !== null) {
    const id = input.clientIdentifier;
    if (typeof id !== 'string') v.add('client_identifier', 'InvalidValue', `Client identifier: ${MUST_BE.string}`);
    else if (!CLIENT_IDENTIFIER.test(id)) {
      v.add('client_identifier', 'InvalidValue', 'Client identifier: must be 1 to 100 characters, each a letter, digit, "_", "." or "-"');
    } else out.identifier = id;
  }

  if (input.description !== undefined) {
    const d = optionalText(v, 'description', input.description, MAX_DESCRIPTION);
    if (d !== undefined) out.description = d;
  }

  if (input.logoUrl !== undefined) {
    const l = optionalText(v, 'logo_url', input.logoUrl, MAX_LOGO_URL);
    if (l) {
      const problem = logoUrlProblem(l);
      if (problem) v.add('logo_url', 'InvalidValue', `Logo url: ${printableUri(l)} ${problem}`);
      else out.logoUrl = l;
    } else if (l === null) out.logoUrl = null;
  }

  v.throwIfAny();
  return out;
}
