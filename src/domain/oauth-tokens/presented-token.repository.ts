import type { TenantSql } from '../../db/tenant-sql';
import type { Role } from '../auth/viewer';
import { callOf, type PlpgsqlFunction } from '../../db/sql-function';
import { COLUMNS, TOKEN_ROW_TYPES, toRecord, type SqlRow } from './oauth-token.rows';
import type { PresentedTokenRow } from './oauth-token.types';

// The authentication lookup of a Bearer token (auth/authenticator.ts): the one
// statement of the hot path, found by the token's hash before its account is
// known (TenantSql.crossTenant), on a subdomain host in that host's account only.

/**
 * The live, unexpired token with hash $1, whose user is active and whose client exists, in one
 * statement with the used_at touch (at most once a minute; the guard, re-checked on the locked
 * row, makes racing processes write once). With a subdomain ($2), only a token of that account
 * is found. A PL/pgSQL function (src/db/sql-function.ts): its plan is cached per server session,
 * behind a transaction pooler too.
 */
export const PRESENTED_TOKEN: PlpgsqlFunction = {
  name: 'presented_token',
  about: "A Bearer token's lookup, with its user and client (PresentedTokenRepository.findPresented): the one statement of the hot path.",
  params: ['text', 'text'],
  returns: [...TOKEN_ROW_TYPES, ['client_scopes', 'text'], ['role', 'text'], ['email', 'text'], ['name', 'text']],
  statement: `WITH found AS (
         SELECT ${COLUMNS}, c.scopes AS client_scopes, u.role::text AS role, u.email, u.name
           FROM oauth_tokens t
           JOIN users u ON u.id = t.user_id AND u.active
           JOIN oauth_clients c ON c.id = t.client_id
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL
            AND (t.expires_at IS NULL OR t.expires_at > now())
            AND ($2::text IS NULL OR t.account_id = (SELECT a.id FROM accounts a WHERE a.subdomain = $2::text))
       ), touched AS (
         UPDATE oauth_tokens o SET used_at = now()
           FROM found
          WHERE o.id = found.id AND (o.used_at IS NULL OR o.used_at < now() - interval '60 seconds')
         RETURNING o.used_at
       )
       SELECT found.id, found.account_id, found.client_id, found.user_id, found.token_prefix, found.scopes, found.created_at,
              found.expires_at, COALESCE((SELECT used_at FROM touched), found.used_at) AS used_at,
              found.grant_type, found.grant_id, found.refresh_token_prefix, found.refresh_token_expires_at,
              found.client_scopes, found.role, found.email, found.name
         FROM found`,
};

export class PresentedTokenRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * The live, unexpired token with this hash, whose user is active and whose
   * client exists, in one statement with the used_at touch (at most once a
   * minute; the guard, re-checked on the locked row, makes racing processes
   * write once). With a subdomain, only a token of that account is found.
   */
  async findPresented(tokenHash: string, subdomain: string | undefined): Promise<PresentedTokenRow | null> {
    const [row] = await this.db.crossTenant<SqlRow & { client_scopes: string; role: Role; email: string; name: string }>('presentedToken', callOf(PRESENTED_TOKEN), [
      tokenHash,
      subdomain ?? null,
    ]);
    if (!row) return null;
    return { record: toRecord(row), clientScopes: row.client_scopes, role: row.role, email: row.email, name: row.name };
  }
}
