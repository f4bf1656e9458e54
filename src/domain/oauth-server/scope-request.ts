import { isValidScope, scopeListProblem, type Access } from '../scopes';
import { InvalidScopeError } from './oauth-errors';

// The `scope` parameter (RFC 6749 §3.3): space-separated, each entry in the
// grammar of docs/api.md "Scopes and roles" (`read`, `write`, `impersonate`, `resource[:access]`),
// capped by the client's scopes, and the client's scopes when absent.

/** What a scope needs the client to allow. A bare resource is read and write; impersonation acts for others: write. */
function accessNeeded(scope: string): Access[] {
  if (scope === 'read' || scope.endsWith(':read')) return ['read'];
  if (scope === 'write' || scope.endsWith(':write') || scope === 'impersonate') return ['write'];
  return ['read', 'write'];
}

/** The scopes a client may grant: its own, e.g. ["read", "write"]. */
function clientScopeList(clientScopes: string): string[] {
  return clientScopes.split(/\s+/).filter(Boolean);
}

/** The `scope` parameter's entries, duplicates dropped, within the limits of a scope list. */
function askedScopes(raw: string): string[] {
  const asked = [...new Set(raw.trim().split(/\s+/))];
  const problem = scopeListProblem(asked);
  if (problem) throw new InvalidScopeError(`scope: ${problem.description}`);
  return asked;
}

/**
 * The scopes granted for a request: each valid and within the client's scopes,
 * duplicates dropped, in the order asked. Throws invalid_scope otherwise.
 */
export function grantedScopes(raw: string | undefined, clientScopes: string): string[] {
  const allowed = clientScopeList(clientScopes);
  if (raw === undefined || raw.trim() === '') return allowed;
  const asked = askedScopes(raw);
  for (const scope of asked) {
    if (!isValidScope(scope)) throw new InvalidScopeError(`Unknown scope: ${scope.slice(0, 100)}`);
    if (!accessNeeded(scope).every((a) => allowed.includes(a))) {
      throw new InvalidScopeError(`Scope ${scope} exceeds the client's scopes (${allowed.join(' ')})`);
    }
  }
  return asked;
}
