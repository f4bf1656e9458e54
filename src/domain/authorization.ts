import { ForbiddenError, UnauthenticatedError } from './errors';
import { clientAllows, scopesGrant, type Access } from './scopes';
import type { Role, Viewer } from './auth/viewer';

export interface Requirement {
  /** roles allowed; empty = any authenticated user. Admins count as agents. */
  roles: readonly Role[];
  access: Access;
}

function roleAllowed(role: Role, roles: readonly Role[]): boolean {
  return roles.length === 0 || roles.includes(role) || (role === 'admin' && roles.includes('agent'));
}

/** Role rules of the seed and scope rules of API.md §3, in one place for both APIs. */
export function authorize(viewer: Viewer | null, requirement: Requirement): Viewer {
  if (!viewer) throw new UnauthenticatedError();
  if (!roleAllowed(viewer.role, requirement.roles)) throw new ForbiddenError();
  const token = viewer.token;
  if (token && !(scopesGrant(token.scopes, requirement.access) && clientAllows(token.clientScopes, requirement.access))) {
    throw new ForbiddenError();
  }
  return viewer;
}
