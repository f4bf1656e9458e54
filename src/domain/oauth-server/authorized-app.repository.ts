import type { TenantSql } from '../../db/tenant-sql';
import { auditCte } from '../audit/audit-log.repository';
import { tokenRevoked } from '../oauth-tokens/oauth-token.events';
import { COLUMNS, byActor, tokenAuditParams, type Int8 } from '../oauth-tokens/oauth-token.rows';
import type { TokenAudit } from '../oauth-tokens/oauth-token.types';

// A person's own authorized apps (docs/api.md, "Your authorized apps"): the
// consents they gave (oauth_grants) and the tokens issued to them outside a
// consent, read and revoked in the scope of their account and of themselves.
// A grant is revoked with its whole family through OAuthGrantRepository.revokeOwn
// and OAuthGrantTokenRepository.revokeGrant (AuthorizedAppsService.revoke).

/** A person's account and themselves: every statement here filters by both. */
export interface PersonScope {
  accountId: bigint;
  userId: bigint;
}

/** A token that still works or can still be refreshed (alias t), as the token lists count it. */
const LIVE_TOKEN = 't.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now() OR t.refresh_token_expires_at > now())';

/**
 * A grant (alias g, of account $1) is live when it is not revoked and has a live
 * token, or an authorization code that can still be redeemed.
 */
export const LIVE_GRANT = `g.revoked_at IS NULL AND (
         EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.account_id = $1 AND t.grant_id = g.id AND ${LIVE_TOKEN})
      OR EXISTS (SELECT 1 FROM oauth_authorization_codes k WHERE k.account_id = $1 AND k.grant_id = g.id AND k.used_at IS NULL AND k.expires_at > now()))`;

/** One row of a person's list. */
interface AuthorizedAppRow {
  kind: 'grant' | 'token';
  id: bigint;
  clientId: bigint;
  clientName: string;
  clientCompany: string | null;
  scopes: string[];
  grantedAt: Date;
  lastUsedAt: Date | null;
}

export class AuthorizedAppRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * The person's live grants and live tokens of no grant (whose client exists),
   * newest first (granted at, then id, descending; a grant before a token at the
   * same instant and id), at most `limit`. A grant's last use is the latest
   * `used_at` of any token of its family (a rotated token's use counts too).
   */
  async list(scope: PersonScope, limit: number): Promise<AuthorizedAppRow[]> {
    const rows = await this.db.query<{
      kind: 'grant' | 'token'; id: Int8; client_id: Int8; client_name: string; client_company: string | null; scopes: string[]; granted_at: Date; last_used_at: Date | null;
    }>(
      scope,
      `SELECT 'grant' AS kind, g.id, c.id AS client_id, c.name AS client_name, c.company AS client_company, coalesce(g.scopes, '{}') AS scopes,
              g.created_at AS granted_at,
              (SELECT max(t.used_at) FROM oauth_tokens t WHERE t.account_id = $1 AND t.grant_id = g.id) AS last_used_at
         FROM oauth_grants g JOIN oauth_clients c ON c.account_id = $1 AND c.id = g.client_id
        WHERE g.account_id = $1 AND g.user_id = $2 AND ${LIVE_GRANT}
       UNION ALL
       SELECT 'token', t.id, c.id, c.name, c.company, coalesce(t.scopes, '{}'), t.created_at, t.used_at
         FROM oauth_tokens t JOIN oauth_clients c ON c.account_id = $1 AND c.id = t.client_id
        WHERE t.account_id = $1 AND t.user_id = $2 AND t.grant_id IS NULL AND ${LIVE_TOKEN}
       ORDER BY granted_at DESC, id DESC, kind ASC
       LIMIT $3`,
      [String(scope.userId), limit],
    );
    return rows.map((r) => ({
      kind: r.kind, id: BigInt(r.id), clientId: BigInt(r.client_id), clientName: r.client_name, clientCompany: r.client_company, scopes: r.scopes,
      grantedAt: r.granted_at, lastUsedAt: r.last_used_at,
    }));
  }

  /**
   * Revokes a live token of the person that belongs to no grant (a token of a
   * grant is revoked with its grant), with its audit record and
   * oauth_token.revoked event; false when the person has no such entry. One statement.
   */
  async revokeToken(scope: PersonScope, id: bigint, audit: TokenAudit): Promise<boolean> {
    const rows = await this.db.query(
      scope,
      `WITH revoked AS (
         UPDATE oauth_tokens t SET revoked_at = now()
          WHERE t.account_id = $1 AND t.user_id = $2 AND t.id = $3 AND t.grant_id IS NULL AND t.client_id IS NOT NULL AND ${LIVE_TOKEN}
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('revoked', 'destroy', 'oauth_token', byActor('revoked', 4), 7)}), ${tokenRevoked('revoked')}
       SELECT id FROM revoked`,
      [String(scope.userId), String(id), ...tokenAuditParams(audit)],
    );
    return rows.length > 0;
  }
}
