import type { AuditActor } from '../audit/audit-log.repository';
import type { RequestOrigin, Role } from '../auth/viewer';
import type { OAuthTokenRecord } from './oauth-token.record';

// The shapes of OAuth tokens that the three token repositories share: the API
// tokens' (oauth-token.repository.ts), the grant endpoints'
// (oauth-grant-token.repository.ts) and the authentication lookup's
// (presented-token.repository.ts).

// (the record itself lives apart: the viewer carries one, and these types import the viewer)
export type { GrantType, OAuthTokenRecord } from './oauth-token.record';

/** What a token issued by the grant endpoint is made of (hashes for storage, the texts for the one response). */
export interface NewGrantToken {
  token: string;
  tokenHash: string;
  expiresIn: number;
  refresh?: { token: string; tokenHash: string; expiresIn: number };
}

/** A token found by the hash of its access or refresh token (revocation, introspection, refresh reuse). */
export interface PresentedHashRow {
  id: bigint;
  accountId: bigint;
  clientId: bigint | null;
  grantId: bigint | null;
  /** which of the token's two secrets the hash named */
  kind: 'access' | 'refresh';
  /** that secret is live: not revoked, not expired, (refresh) not rotated, user active */
  live: boolean;
  /** the refresh token was rotated already (presenting it again is a replay) */
  refreshUsed: boolean;
  scopes: string[];
  createdAt: Date;
  /** of the secret the hash named */
  expiresAt: Date | null;
  clientIdentifier: string | null;
  userId: bigint;
  email: string;
  /** the user's name (the actor of a revocation at /oauth/revoke) */
  name: string;
}

/** Who changes a token, and the audit record's description (a statement with auditCte writes it). */
export interface TokenAudit {
  actor: AuditActor;
  description: string;
}

/** The audit of a token issued at a grant endpoint: the actor is the user the token acts as. */
export interface GrantAudit {
  origin: RequestOrigin;
  /** e.g. "Issued by the client_credentials grant for client 12" */
  description: string;
}

/** A token revoked with others (a client's, a grant's): what its audit record names. */
export interface RevokedToken {
  id: bigint;
  accountId: bigint;
  userId: bigint;
  /** the first 10 characters */
  prefix: string;
  /** the token as list and show give it (its event's detail) */
  record: OAuthTokenRecord;
}

/** A live token found by its hash, with what authentication needs of its user and client. */
export interface PresentedTokenRow {
  record: OAuthTokenRecord;
  clientScopes: string;
  role: Role;
  email: string;
  name: string;
}

export const TOKEN_PREFIX_LENGTH = 10;
/** unknown client in a filter: matches no row */
export const NO_CLIENT = -1n;
