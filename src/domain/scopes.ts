// Token scopes (docs/api.md "Scopes and roles"): parse, validate, decide.

export type Access = 'read' | 'write';

const RESOURCES = new Set([
  'tickets', 'users', 'auditlogs', 'organizations', 'hc', 'apps', 'triggers', 'automations', 'targets',
  'webhooks', 'macros', 'requests', 'satisfaction_ratings', 'dynamic_content', 'any_channel', 'web_widget',
]);
const READ_ONLY = new Set(['auditlogs']);
const WRITE_ONLY = new Set(['any_channel', 'web_widget']);
const ACCESS = new Set(['read', 'write', 'impersonate']);

export function isValidScope(scope: unknown): boolean {
  if (typeof scope !== 'string') return false;
  const parts = scope.split(':');
  if (parts.length === 1) return ACCESS.has(scope) || RESOURCES.has(scope);
  if (parts.length !== 2) return false;
  const [resource, access] = parts;
  if (!RESOURCES.has(resource)) return false;
  if (access === 'read') return !WRITE_ONLY.has(resource);
  if (access === 'write') return !READ_ONLY.has(resource);
  return false; // impersonate is global only; anything else is not an access
}

/** The limits of a list of scopes, wherever one is taken in: a token's `scopes`, the OAuth `scope` parameter. */
export const MAX_SCOPES = 50;
export const MAX_SCOPE_LENGTH = 100;

/**
 * Why a list of scopes cannot be taken in, or undefined when it can: more than
 * MAX_SCOPES, one over MAX_SCOPE_LENGTH, or a NUL character (PostgreSQL text
 * cannot hold it; invalid scopes are otherwise stored as given, and refused when used).
 */
export function scopeListProblem(scopes: readonly string[]): { error: 'TooLong' | 'InvalidValue'; description: string } | undefined {
  if (scopes.length > MAX_SCOPES || scopes.some((s) => s.length > MAX_SCOPE_LENGTH)) {
    return { error: 'TooLong', description: `at most ${MAX_SCOPES} scopes of at most ${MAX_SCOPE_LENGTH} characters` };
  }
  if (scopes.some((s) => s.includes('\0'))) return { error: 'InvalidValue', description: 'must not contain NUL characters' };
  return undefined;
}

export function allScopesValid(scopes: readonly unknown[]): boolean {
  return scopes.every(isValidScope);
}

/**
 * Unscoped read/write grant every endpoint. Endpoints of a scope resource (users,
 * auditlogs) are also granted by `<resource>:<access>` and by the bare `<resource>`
 * (read and write on it); `tickets:read` grants nothing here.
 */
export function scopesGrant(scopes: readonly string[], access: Access, resource?: string): boolean {
  if (scopes.includes(access)) return true;
  if (resource === undefined) return false;
  if (scopes.includes(`${resource}:${access}`)) return true;
  return scopes.includes(resource) && isValidScope(`${resource}:${access}`);
}

// A client's scope string, split once: asked on every authorized field of every
// request (200 times for a page of 100 tokens with their client and user).
const CLIENT_SCOPE_SETS_MAX = 1000;
const clientScopeSets = new Map<string, ReadonlySet<string>>();

/** A client's scopes ("read", "write", "read write") cap every token issued for it. */
export function clientAllows(clientScopes: string, access: Access): boolean {
  let set = clientScopeSets.get(clientScopes);
  if (set === undefined) {
    if (clientScopeSets.size >= CLIENT_SCOPE_SETS_MAX) clientScopeSets.clear();
    set = new Set(clientScopes.split(/\s+/));
    clientScopeSets.set(clientScopes, set);
  }
  return set.has(access);
}

const ACCESS_WORDS: Record<string, string> = {
  read: 'Read your help desk data',
  write: 'Create, change and delete your help desk data',
  impersonate: 'Make requests on behalf of end users',
};

/** A scope in words, for the consent page ("tickets:read" → "Read tickets"). */
export function describeScope(scope: string): string {
  if (ACCESS_WORDS[scope]) return ACCESS_WORDS[scope];
  const [resource, access] = scope.split(':');
  const name = resource.replace(/_/g, ' ');
  if (access === 'read') return `Read ${name}`;
  if (access === 'write') return `Create, change and delete ${name}`;
  return `Read and change ${name}`;
}
