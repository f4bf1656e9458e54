import type { PresentedToken, Viewer } from '../auth/viewer';
import { ValidationError } from '../errors';
import { clientAllows, isValidScope, scopesGrant, type Access } from '../scopes';

// What a credential may hand out when it creates a token (docs/api.md "OAuth
// tokens"): no credential mints one wider or longer-lived than itself. A password
// sign-in (Basic) has the full rights of its role, and creates tokens as Zendesk
// does (scopes as given, invalid ones included; no expiry). A token gets at most
// what it covers itself, expires when it does, and dies with its grant.

/** The life a new token inherits from the credential that creates it. */
export interface MintedLife {
  expiresAt: Date | null;
  grantId: bigint | null;
}

/** The accesses a valid scope gives: its own, or read and write for a bare resource (what the resource allows). */
function accessesOf(scope: string): Access[] {
  const [resource, access] = scope.split(':');
  if (access !== undefined) return [access as Access];
  if (resource === 'read' || resource === 'write') return [resource];
  return (['read', 'write'] as const).filter((a) => isValidScope(`${resource}:${a}`));
}

/**
 * Whether a presented token covers a requested scope: `impersonate` needs
 * `impersonate`; every access a scope gives (a bare resource gives read and
 * write) must be granted by the token's scopes and allowed by its client. An
 * invalid scope is covered by no token.
 */
function covers(token: PresentedToken, scope: string): boolean {
  if (!isValidScope(scope)) return false;
  if (scope === 'impersonate') return token.scopes.includes('impersonate');
  const resource = scope === 'read' || scope === 'write' ? undefined : scope.split(':')[0];
  return accessesOf(scope).every((access) => scopesGrant(token.scopes, access, resource) && clientAllows(token.clientScopes, access));
}

/**
 * The life of a token the viewer creates with these scopes; a token minter asking
 * for scopes it does not cover gets a 422 that names them (nothing is silently dropped).
 */
export function mintedLife(viewer: Viewer, scopes: readonly string[]): MintedLife {
  const token = viewer.token;
  if (!token) return { expiresAt: null, grantId: null };
  const beyond = [...new Set(scopes.filter((scope) => !covers(token, scope)))];
  if (beyond.length > 0) {
    throw new ValidationError({
      scopes: [{ error: 'InvalidValue', description: `Scopes: ${beyond.join(', ')} are beyond the access of the token making the request`.slice(0, 1000) }],
    });
  }
  return { expiresAt: token.record.expiresAt, grantId: token.record.grantId };
}
