import { ForbiddenError, UnauthenticatedError } from './errors';
import { clientAllows, scopesGrant, type Access } from './scopes';
import type { Role, Viewer } from './auth/viewer';

// The one authorization rule of the service (docs/api.md, "Scopes and roles"), as data. Every way to
// reach a record asks it: GraphQL root fields and nested fields (through their
// @Allow decorator), the REST routes (through the root field their operation
// runs), and the repositories (through the row scopes below), DataLoaders and
// counts included.

interface Rule {
  /** roles allowed; empty = any authenticated user. Admins count as agents. */
  roles: readonly Role[];
  /**
   * What a token must grant: `read` / `write` (unscoped, and allowed by its
   * client), or `none` for what a token may always do to itself.
   */
  access: Access | 'none';
  /**
   * The scope resource of the endpoint (docs/api.md, "Scopes and roles"), when it is one: a token with
   * `<resource>:<access>` or the bare `<resource>` is granted as by `<access>`.
   */
  resource?: 'users' | 'auditlogs' | 'webhooks';
}

const rule = (roles: readonly Role[], access: Rule['access'], resource?: Rule['resource']): Rule =>
  resource === undefined ? { roles, access } : { roles, access, resource };

/**
 * Permission → rule. Which rows a permission reaches is the matching row scope
 * (tokensVisibleTo etc.): e.g. `oauthTokens.read` lets an agent read tokens, and
 * the scope makes those its own.
 */
const POLICY = {
  'oauthClients.read': rule(['admin'], 'read'),
  'oauthClients.write': rule(['admin'], 'write'),
  /** listing and creating tokens: admins (docs/api.md, "OAuth tokens") */
  'oauthTokens.list': rule(['admin'], 'read'),
  'oauthTokens.create': rule(['admin'], 'write'),
  /** show and revoke by id: anyone, on the tokens their scope reaches */
  'oauthTokens.read': rule([], 'read'),
  'oauthTokens.revoke': rule([], 'write'),
  /** the presented token shows and revokes itself, whatever its scopes */
  'oauthTokens.current': rule([], 'none'),
  /** a person's own authorized apps (docs/api.md, "Your authorized apps"): anyone, their own; listing with `read`, revoking with `write` */
  'authorizedApps.read': rule([], 'read'),
  'authorizedApps.revoke': rule([], 'write'),
  /** users: anyone reads themselves, admins their account's */
  'users.read': rule([], 'read', 'users'),
  /** listing the account's users, and creating, updating, deleting them: admins */
  'users.list': rule(['admin'], 'read', 'users'),
  'users.write': rule(['admin'], 'write', 'users'),
  /** a password: anyone their own (with the previous one), admins their account's users' (usersVisibleTo) */
  'users.password': rule([], 'write', 'users'),
  'callbackRequests.read': rule(['agent'], 'read'),
  'callbackRequests.create': rule(['agent'], 'write'),
  /** accept, decline, report an outcome, cancel: agents and admins; which request each may act on is the lifecycle's rule (docs/api.md) */
  'callbackRequests.handle': rule(['agent'], 'write'),
  /** agents' availability: agents read anyone's in the account; set their own (admins anyone's: the service's rule) */
  'agentAvailability.read': rule(['agent'], 'read'),
  'agentAvailability.write': rule(['agent'], 'write'),
  /** voice phone numbers and groups: agents read them, admins write them */
  'directory.read': rule(['agent'], 'read'),
  /** the audit log: admins, with `read` or the auditlogs scope (read only: `auditlogs:write` is not a valid scope) */
  'auditLogs.read': rule(['admin'], 'read', 'auditlogs'),
  'directory.write': rule(['admin'], 'write'),
  /** the account's settings (omnichannel routing) */
  'account.read': rule(['admin'], 'read'),
  'account.write': rule(['admin'], 'write'),
  /** webhooks, their signing secrets included: admins, with `read`/`write` or the webhooks scope */
  'webhooks.read': rule(['admin'], 'read', 'webhooks'),
  'webhooks.write': rule(['admin'], 'write', 'webhooks'),
  /** the account's events, live (GraphQL subscription accountEvents): admins with `read`, as webhooks are admins' */
  'events.read': rule(['admin'], 'read'),
} as const satisfies Record<string, Rule>;

export type Permission = keyof typeof POLICY;

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(POLICY, value);
}

function roleAllowed(role: Role, roles: readonly Role[]): boolean {
  return roles.length === 0 || roles.includes(role) || (role === 'admin' && roles.includes('agent'));
}

/**
 * Who may use a permission, in the words of docs/api.md's "Scopes and roles" table (its
 * "roles" and "token needs" columns): the GraphQL schema appends it to the description of
 * each field that carries the permission, so that what Sandbox shows is the policy itself.
 */
export function describePermission(permission: Permission): string {
  const { roles, access, resource } = POLICY[permission] as Rule;
  const who = roles.length === 0 ? 'any user' : roles.includes('agent') ? 'agents and admins' : 'admins';
  const token = access === 'none'
    ? 'none (a token may always use it on itself)'
    : resource === undefined ? `\`${access}\`` : `\`${access}\`, \`${resource}:${access}\` or \`${resource}\``;
  return `Who: ${who}. Token needs: ${token}.`;
}

/** Whether the viewer may use a permission: yes, or the error to answer with. */
export function authorize(viewer: Viewer | null, permission: Permission): Viewer {
  if (!viewer) throw new UnauthenticatedError();
  const { roles, access, resource } = POLICY[permission] as Rule;
  if (!roleAllowed(viewer.role, roles)) throw new ForbiddenError();
  const token = viewer.token;
  if (token && access !== 'none' && !(scopesGrant(token.scopes, access, resource) && clientAllows(token.clientScopes, access))) {
    throw new ForbiddenError();
  }
  return viewer;
}

/**
 * Changes that hand out sign-in power (the admin role, a password someone else
 * signs in with) need a credential that scopes do not limit, as Keycloak gives no
 * role the caller lacks and GitHub asks for the password again (sudo mode): a
 * password sign-in (Basic), or a token with unscoped `write` that its client
 * allows. A `users:write` token manages users, but cannot turn itself into an
 * admin or a Basic login. Otherwise 403.
 */
export function authorizeUnscoped(viewer: Viewer): Viewer {
  const token = viewer.token;
  if (token && !(token.scopes.includes('write') && clientAllows(token.clientScopes, 'write'))) throw new ForbiddenError();
  return viewer;
}

// Row scopes: the rows of a table a viewer reaches. Repositories apply them in
// every statement; an id outside the scope behaves exactly like an id that does
// not exist (docs/api.md, "Tenancy").

/** Rows of the viewer's account. */
export interface AccountScope {
  accountId: bigint;
}

/** Rows of the viewer's account, and of one user when `userId` is set. */
export interface OwnerScope extends AccountScope {
  userId?: bigint;
}

export function accountScope(viewer: Viewer): AccountScope {
  return { accountId: viewer.accountId };
}

/** Tokens: the account's for admins, their own for everyone else. */
export function tokensVisibleTo(viewer: Viewer): OwnerScope {
  return viewer.role === 'admin' ? { accountId: viewer.accountId } : { accountId: viewer.accountId, userId: viewer.userId };
}

/**
 * Tokens a list shows (Zendesk's List Tokens): the viewer's own by default; with
 * `all`, every token the viewer may see (tokensVisibleTo: an admin's account).
 */
export function tokensListedFor(viewer: Viewer, all: boolean): OwnerScope {
  return all ? tokensVisibleTo(viewer) : { accountId: viewer.accountId, userId: viewer.userId };
}

/** Users: the account's for admins, themselves for everyone else. */
export function usersVisibleTo(viewer: Viewer): { accountId: bigint; id?: bigint } {
  return viewer.role === 'admin' ? { accountId: viewer.accountId } : { accountId: viewer.accountId, id: viewer.userId };
}
