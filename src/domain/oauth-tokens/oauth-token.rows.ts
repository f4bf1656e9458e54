import { originParams, type AuditRowSql } from '../audit/audit-log.repository';
import type { GrantType, OAuthTokenRecord, RevokedToken, TokenAudit } from './oauth-token.types';

// The SQL of oauth_tokens rows that every token repository shares: the columns
// read, toRecord() (the one row mapper) and the audit columns of a statement
// that changes tokens and writes their audit records itself (auditCte).

export type Int8 = string | number | bigint;
export interface SqlRow {
  id: Int8; account_id: Int8; client_id: Int8 | null; user_id: Int8; token_prefix: string; scopes: string[];
  created_at: Date; expires_at: Date | null; used_at: Date | null;
  grant_type: GrantType | null; grant_id: Int8 | null; refresh_token_prefix: string | null; refresh_token_expires_at: Date | null;
}
export const COLUMNS =
  "t.id, t.account_id, t.client_id, t.user_id, t.token_prefix, coalesce(t.scopes, '{}') AS scopes, t.created_at, t.expires_at, t.used_at, " +
  't.grant_type::text AS grant_type, t.grant_id, t.refresh_token_prefix, t.refresh_token_expires_at';

/** The types of COLUMNS, in order: what a PL/pgSQL function returning them declares (src/db/sql-function.ts). */
export const TOKEN_ROW_TYPES = [
  ['id', 'bigint'], ['account_id', 'bigint'], ['client_id', 'bigint'], ['user_id', 'bigint'], ['token_prefix', 'text'], ['scopes', 'text[]'],
  ['created_at', 'timestamptz'], ['expires_at', 'timestamptz'], ['used_at', 'timestamptz'], ['grant_type', 'text'], ['grant_id', 'bigint'],
  ['refresh_token_prefix', 'text'], ['refresh_token_expires_at', 'timestamptz'],
] as const;

export function toRecord(r: SqlRow, full?: { token: string; refreshToken?: string }): OAuthTokenRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), clientId: r.client_id === null ? null : BigInt(r.client_id), userId: BigInt(r.user_id),
    token: full?.token ?? r.token_prefix, scopes: r.scopes, createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at,
    grantType: r.grant_type, grantId: r.grant_id === null ? null : BigInt(r.grant_id), refreshToken: full?.refreshToken ?? r.refresh_token_prefix, refreshTokenExpiresAt: r.refresh_token_expires_at,
  };
}

/** A row of a revocation (RETURNING COLUMNS), for the caller's audit records and events. */
export function revokedToken(r: SqlRow): RevokedToken {
  return { id: BigInt(r.id), accountId: BigInt(r.account_id), userId: BigInt(r.user_id), prefix: r.token_prefix, record: toRecord(r) };
}

/** A token's label in the audit log: its first 10 characters and "..." (never the token). */
const label = (cte: string) => `${cte}.token_prefix || '...'`;

/**
 * Audit columns of a change to the tokens of CTE `cte` by a known actor:
 * parameters $n (actor id), $n+1 (actor name), $n+2 (description); with
 * auditCte's origin at $n+3.. (tokenAuditParams gives all six).
 */
export function byActor(cte: string, n: number): AuditRowSql {
  return {
    accountId: `${cte}.account_id`, actorId: `$${n}::bigint`, actorName: `$${n + 1}::text`,
    sourceId: `${cte}.id`, sourceLabel: label(cte), description: `$${n + 2}::text`,
  };
}
export const tokenAuditParams = (a: TokenAudit) => [a.actor.actorId === null ? null : String(a.actor.actorId), a.actor.actorName, a.description, ...originParams(a.actor.origin)];

/** Audit columns of a token issued at a grant endpoint: its own user is the actor; `description` is SQL. */
export function asItsUser(cte: string, description: string): AuditRowSql {
  return {
    accountId: `${cte}.account_id`, actorId: `${cte}.user_id`, actorName: `(SELECT u.name FROM users u WHERE u.id = ${cte}.user_id)`,
    sourceId: `${cte}.id`, sourceLabel: label(cte), description,
  };
}
