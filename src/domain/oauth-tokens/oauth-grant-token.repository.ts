import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { auditCte, originParams } from '../audit/audit-log.repository';
import { clientCheckParams, clientCheckSql, StaleClientError, type ClientCheck } from '../oauth-clients/client-grant-cache';
import { tokenCreated, tokenRevoked } from './oauth-token.events';
import { COLUMNS, asItsUser, byActor, revokedToken, toRecord, tokenAuditParams, type Int8, type SqlRow } from './oauth-token.rows';
import {
  TOKEN_PREFIX_LENGTH, type GrantAudit, type GrantType, type NewGrantToken, type OAuthTokenRecord, type PresentedHashRow, type RevokedToken,
  type TokenAudit,
} from './oauth-token.types';

// The statements of the authorization server's endpoints (/oauth/token,
// /oauth/revoke, /oauth/introspect) on oauth_tokens. Each runs in the account of
// the client that authenticated (its scope): a code, grant, refresh token or
// token of another account is not found. Tokens issued here write their audit
// records in the same statement (auditCte), their user being the actor.

/** The columns of a new grant token after the common ones: hashes, prefixes, lifetimes ($n from `first`). */
function grantTokenParams(t: NewGrantToken): unknown[] {
  return [
    t.tokenHash, t.token.slice(0, TOKEN_PREFIX_LENGTH), t.expiresIn,
    t.refresh?.tokenHash ?? null, t.refresh ? t.refresh.token.slice(0, TOKEN_PREFIX_LENGTH) : null, t.refresh?.expiresIn ?? null,
  ];
}
const GRANT_TOKEN_COLUMNS = 'token_hash, token_prefix, expires_at, refresh_token_hash, refresh_token_prefix, refresh_token_expires_at';
/** The values of GRANT_TOKEN_COLUMNS from parameters $n..$n+5 */
const grantTokenValues = (n: number) =>
  `$${n}, $${n + 1}, now() + make_interval(secs => $${n + 2}::int), $${n + 3}, $${n + 4}, now() + make_interval(secs => $${n + 5}::int)`;

/** issueForClient's statement (built once: a hot path's text is not rebuilt per request) */
const ISSUE_FOR_CLIENT = `WITH ok AS (SELECT ${clientCheckSql(15)} AS client_ok), counted AS (
         SELECT coalesce(sum(n.issued), 0) AS live, min(n.ends_at) AS frees_at
           FROM oauth_client_token_counts n WHERE n.account_id = $1 AND n.client_id = $2 AND n.ends_at > now()
       ), issued AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, scopes, grant_type, ${GRANT_TOKEN_COLUMNS})
         SELECT c.account_id, c.id, c.agent_id, $3::text[], 'client_credentials', ${grantTokenValues(4)}
           FROM oauth_clients c JOIN users u ON u.id = c.agent_id AND u.account_id = c.account_id AND u.active
          WHERE c.account_id = $1 AND c.id = $2 AND (SELECT live FROM counted) < $14 AND (SELECT client_ok FROM ok)
         RETURNING ${COLUMNS}
       ), counter AS (
         INSERT INTO oauth_client_token_counts AS n (account_id, client_id, ends_at, shard, issued)
         SELECT issued.account_id, issued.client_id,
                date_bin('15 minutes', issued.expires_at, timestamptz '2000-01-01 00:00:00+00') + interval '15 minutes', pg_backend_pid() % 8, 1
           FROM issued
         ON CONFLICT (client_id, ends_at, shard) DO UPDATE SET issued = n.issued + 1
       ), pruned AS (
         DELETE FROM oauth_client_token_counts n WHERE n.account_id = $1 AND n.client_id = $2 AND n.ends_at <= now()
       ), audit AS (${auditCte('issued', 'create', 'oauth_token', asItsUser('issued', '$10::text'), 11)}), ${tokenCreated('issued')}
       SELECT issued.*, counted.live, counted.frees_at, ok.client_ok FROM counted CROSS JOIN ok LEFT JOIN issued ON true`;

/** rotateRefresh's statement (built once: a hot path's text is not rebuilt per request) */
const ROTATE_REFRESH = `WITH old AS (
         UPDATE oauth_tokens o SET refresh_token_used_at = now(), revoked_at = now()
          WHERE o.id = (SELECT p.id FROM oauth_tokens p WHERE p.refresh_token_hash = $2)
            AND o.account_id = $1 AND o.client_id = $3 AND o.refresh_token_used_at IS NULL AND o.revoked_at IS NULL
            AND o.refresh_token_expires_at > now() AND ($4::text[] IS NULL OR $4::text[] <@ o.scopes) AND ${clientCheckSql(15)}
         RETURNING o.id, o.account_id, o.client_id, o.user_id, o.scopes, o.grant_id,
                   o.token_prefix, o.created_at, o.expires_at, o.used_at, o.refresh_token_prefix, o.refresh_token_expires_at
       ), family AS (
         SELECT g.id FROM oauth_grants g JOIN old ON g.id = old.grant_id WHERE g.revoked_at IS NULL FOR SHARE OF g
       ), issued AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, scopes, grant_type, grant_id, ${GRANT_TOKEN_COLUMNS})
         SELECT old.account_id, old.client_id, old.user_id, COALESCE($4::text[], old.scopes), 'refresh_token', old.grant_id, ${grantTokenValues(5)}
           FROM old JOIN family ON family.id = old.grant_id JOIN users u ON u.id = old.user_id AND u.active
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('issued CROSS JOIN old', 'create', 'oauth_token', asItsUser('issued', '$11::text || old.id'), 12)}),
       ${tokenCreated('issued', 'old')}, ${tokenRevoked('old')}
       SELECT * FROM issued`;

/** findByEitherHash's statement (built once: a hot path's text is not rebuilt per request) */
const FIND_BY_EITHER_HASH = `SELECT ok.client_ok, found.* FROM (SELECT ${clientCheckSql(3)} AS client_ok) ok LEFT JOIN (SELECT t.id, t.account_id, t.client_id, t.grant_id, t.token_hash = $2 AS is_access, coalesce(t.scopes, '{}') AS scopes, t.created_at,
              t.refresh_token_used_at IS NOT NULL AS refresh_used,
              CASE WHEN t.token_hash = $2 THEN t.expires_at ELSE t.refresh_token_expires_at END AS expires_at,
              t.revoked_at IS NULL AND u.active AND c.id IS NOT NULL AND CASE WHEN t.token_hash = $2
                THEN t.expires_at IS NULL OR t.expires_at > now()
                ELSE t.refresh_token_used_at IS NULL AND t.refresh_token_expires_at > now() END AS live,
              c.identifier AS client_identifier, u.id AS user_id, u.email, u.name
         FROM oauth_tokens t
         JOIN users u ON u.id = t.user_id
         LEFT JOIN oauth_clients c ON c.id = t.client_id
        WHERE t.account_id = $1 AND (t.token_hash = $2 OR t.refresh_token_hash = $2)) found ON ok.client_ok`;

export class OAuthGrantTokenRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * A token (with its refresh token) for a grant of the scope that is not
   * revoked and whose user is active; null otherwise. The grant's row is
   * share-locked until the caller's transaction ends, so a family revocation
   * (which updates that row first) waits for this token and then sees it. `scopes`
   * (a remembered consent's code's): the token's, within the grant's; absent, the grant's.
   */
  async issueForGrant(
    scope: AccountScope, grantId: bigint, grantType: GrantType, t: NewGrantToken, audit: GrantAudit, scopes?: string[] | null,
  ): Promise<OAuthTokenRecord | null> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      `WITH issued AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, scopes, grant_type, grant_id, ${GRANT_TOKEN_COLUMNS})
         SELECT g.account_id, g.client_id, g.user_id, coalesce($14::text[], g.scopes), $3::"OAuthGrantType", g.id, ${grantTokenValues(4)}
           FROM oauth_grants g JOIN users u ON u.id = g.user_id AND u.active
          WHERE g.account_id = $1 AND g.id = $2 AND g.revoked_at IS NULL AND ($14::text[] IS NULL OR g.scopes @> $14::text[])
            FOR SHARE OF g
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('issued', 'create', 'oauth_token', asItsUser('issued', '$10::text'), 11)}), ${tokenCreated('issued')}
       SELECT * FROM issued`,
      [String(grantId), grantType, ...grantTokenParams(t), audit.description, ...originParams(audit.origin), scopes ?? null],
    );
    return row ? toRecord(row, { token: t.token, refreshToken: t.refresh?.token }) : null;
  }

  /**
   * A client-credentials token for a client of the scope: it acts as the admin who
   * created the client, while that user is active. No refresh token. Issued only
   * while the client holds fewer than `liveLimit` live client_credentials tokens,
   * counted in the same statement from oauth_client_token_counts (a counter per
   * 15-minute bucket of expiry and per shard: a handful of rows, whatever the limit;
   * a revoked token counts until it would have expired). `record` is null when
   * nothing was issued; `live` and `freesAt` (when the oldest counted bucket ends)
   * say whether the limit was why (another account's client counts 0). With `check`
   * (a client from the grant cache), nothing is issued and StaleClientError thrown
   * when that client no longer holds.
   */
  async issueForClient(
    scope: AccountScope, clientId: bigint, scopes: string[], t: NewGrantToken, audit: GrantAudit, liveLimit: number, check?: ClientCheck,
  ): Promise<{ record: OAuthTokenRecord | null; live: number; freesAt: Date | null }> {
    const [row] = await this.db.query<Partial<SqlRow> & { live: string | number; frees_at: Date | null; client_ok: boolean }>(
      scope,
      ISSUE_FOR_CLIENT,
      [String(clientId), scopes, ...grantTokenParams(t), audit.description, ...originParams(audit.origin), liveLimit, ...clientCheckParams(check)],
    );
    if (!row.client_ok) throw new StaleClientError();
    const record = row.id === null || row.id === undefined ? null : toRecord(row as SqlRow, { token: t.token });
    return { record, live: Number(row.live), freesAt: row.frees_at };
  }

  /**
   * Refresh-token rotation in one statement: the presented refresh token (live,
   * of this client of the scope, not rotated yet, covering `scopes` when given)
   * is marked used and its token revoked, and a new token of the same grant is
   * inserted, with the same or the narrowed scopes. The row lock makes two racing
   * processes rotate once: the second finds it used. The new token's audit record
   * says which token it rotated (`audit.description` followed by the old token's
   * id). Null when nothing was rotated (also when `check`, a cached client, no longer
   * holds: the caller's findByEitherHash with the same check then says so).
   */
  async rotateRefresh(
    scope: AccountScope, refreshHash: string, clientId: bigint, scopes: string[] | undefined, t: NewGrantToken, audit: GrantAudit, check?: ClientCheck,
  ): Promise<OAuthTokenRecord | null> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      // The row's id comes from its unique hash first: with the hash beside the account in one filter, the
      // generic plan of this prepared statement read the (account_id, client_id) index and scanned every
      // token of a busy client (bench scenario 11 fell from ~0.3 to 0.01 × floor).
      ROTATE_REFRESH,
      [refreshHash, String(clientId), scopes ?? null, ...grantTokenParams(t), audit.description, ...originParams(audit.origin), ...clientCheckParams(check)],
    );
    return row ? toRecord(row, { token: t.token, refreshToken: t.refresh?.token }) : null;
  }

  /** The token of the scope whose access or refresh token has this hash, with what revocation and introspection need. */
  /**
   * With `check` (a client from the grant cache), first whether that client still holds:
   * StaleClientError, nothing read, when it does not. Still one statement.
   */
  async findByEitherHash(scope: AccountScope, hash: string, check?: ClientCheck): Promise<PresentedHashRow | null> {
    const [r] = await this.db.query<{
      client_ok: boolean; id: Int8 | null; account_id: Int8; client_id: Int8 | null; grant_id: Int8 | null; is_access: boolean; live: boolean; refresh_used: boolean;
      scopes: string[]; created_at: Date; expires_at: Date | null; client_identifier: string | null; user_id: Int8; email: string; name: string;
    }>(
      scope,
      FIND_BY_EITHER_HASH,
      [hash, ...clientCheckParams(check)],
    );
    if (!r.client_ok) throw new StaleClientError();
    if (r.id === null) return null;
    return {
      id: BigInt(r.id), accountId: BigInt(r.account_id), clientId: r.client_id === null ? null : BigInt(r.client_id),
      grantId: r.grant_id === null ? null : BigInt(r.grant_id), kind: r.is_access ? 'access' : 'refresh', live: r.live, refreshUsed: r.refresh_used,
      scopes: r.scopes, createdAt: r.created_at, expiresAt: r.expires_at, clientIdentifier: r.client_identifier, userId: BigInt(r.user_id), email: r.email,
      name: r.name,
    };
  }

  /**
   * Revokes a token of the scope by id (the presented token revoking itself at
   * /oauth/revoke), with its audit record; false when it was revoked already. One statement.
   */
  async revokeById(scope: AccountScope, id: bigint, audit: TokenAudit): Promise<boolean> {
    const rows = await this.db.query(
      scope,
      `WITH revoked AS (UPDATE oauth_tokens t SET revoked_at = now() WHERE t.account_id = $1 AND t.id = $2 AND t.revoked_at IS NULL RETURNING ${COLUMNS}),
       audit AS (${auditCte('revoked', 'destroy', 'oauth_token', byActor('revoked', 3), 6)}), ${tokenRevoked('revoked')}
       SELECT id FROM revoked`,
      [String(id), ...tokenAuditParams(audit)],
    );
    return rows.length > 0;
  }

  /**
   * Revokes every token of a grant (a family) of the scope, in the caller's
   * transaction after the grant's own row; the tokens it revoked, for the
   * caller's audit records.
   */
  async revokeGrant(scope: AccountScope, grantId: bigint): Promise<RevokedToken[]> {
    const rows = await this.db.query<SqlRow>(
      scope,
      `UPDATE oauth_tokens t SET revoked_at = now() WHERE t.account_id = $1 AND t.grant_id = $2 AND t.revoked_at IS NULL RETURNING ${COLUMNS}`,
      [String(grantId)],
    );
    return rows.map(revokedToken);
  }
}
