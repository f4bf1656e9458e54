import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope, OwnerScope } from '../authorization';
import { auditCte } from '../audit/audit-log.repository';
import { tokenCreated, tokenRevoked } from './oauth-token.events';
import { keysetPageOf, type KeysetPage, type OffsetPage, type PageResult } from '../pagination';
import { COLUMNS, TOKEN_ROW_TYPES, byActor, revokedToken, toRecord, tokenAuditParams, type Int8, type SqlRow } from './oauth-token.rows';
import { callOf, type PlpgsqlFunction } from '../../db/sql-function';
import { TOKEN_PREFIX_LENGTH, type OAuthTokenRecord, type RevokedToken, type TokenAudit } from './oauth-token.types';

// The API tokens' statements (OAuthTokenService, and the revocations that go
// with deleting a client or deactivating a user). Plain SQL, one statement per
// request on the hot paths, prepared once per connection (bench/tuning-log.md);
// every read of records goes through scopeSql(), the policy's row scope
// (domain/authorization.ts), on the account TenantSql binds. Every statement that
// creates or revokes tokens writes their audit records itself (auditCte: the
// same statement, so the same transaction, and no extra round trip), except
// revokeAllOfClient and revokeAllOfUser, whose callers record the change in
// their transaction (recordAudit). The same goes for their events (eventCtes).

/**
 * WHERE of the live tokens of a scope (alias t) after the account's ($1);
 * appends its parameters, which are $2, $3, …. A grant token whose access token
 * expired stays while its refresh token lives.
 */
function scopeSql(scope: OwnerScope, params: unknown[], clientId?: bigint): string {
  let where = 't.account_id = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now() OR t.refresh_token_expires_at > now())';
  if (scope.userId !== undefined) {
    params.push(String(scope.userId));
    where += ` AND t.user_id = $${params.length + 1}`;
  }
  if (clientId !== undefined) {
    params.push(String(clientId));
    where += ` AND t.client_id = $${params.length + 1}`;
  }
  return where;
}

/**
 * A token's creation (insert() below): the token, for one of the account's clients ($1, $2),
 * owned by $3, with its hash, prefix, scopes, expiry and grant ($4..$8), its audit record
 * ($9..$14: tokenAuditParams) and its oauth_token.created event, in one statement. A
 * PL/pgSQL function (src/db/sql-function.ts): its plan is cached per server session,
 * behind a transaction pooler too.
 */
export const TOKEN_INSERT: PlpgsqlFunction = {
  name: 'oauth_token_insert',
  about: "An API token's creation with its audit record and event (OAuthTokenRepository.insert).",
  params: ['bigint', 'bigint', 'bigint', 'text', 'text', 'text[]', 'timestamptz', 'bigint', 'bigint', 'text', 'text', 'text', 'text', 'text'],
  returns: TOKEN_ROW_TYPES,
  statement: `WITH created AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, token_hash, token_prefix, scopes, expires_at, grant_id)
         SELECT c.account_id, c.id, $3, $4, $5, $6::text[], $7::timestamptz, $8::bigint FROM oauth_clients c
          WHERE c.account_id = $1 AND c.id = $2
            AND ($8::bigint IS NULL OR EXISTS (
              SELECT 1 FROM oauth_grants g WHERE g.account_id = $1 AND g.id = $8::bigint AND g.revoked_at IS NULL FOR SHARE OF g))
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('created', 'create', 'oauth_token', byActor('created', 9), 12)}), ${tokenCreated('created')}
       SELECT * FROM created`,
};

export class OAuthTokenRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * Stores a token for one of the scope's account's clients, owned by `userId`,
   * and its audit record; null when the client is not the account's, or when
   * `grantId` names a grant that is revoked (its row is share-locked, as
   * issueForGrant does, so a family revocation running meanwhile sees this
   * token). One statement.
   */
  async insert(
    scope: { accountId: bigint; userId: bigint },
    row: { clientId: bigint; tokenHash: string; token: string; scopes: string[]; expiresAt: Date | null; grantId: bigint | null },
    audit: TokenAudit,
  ): Promise<OAuthTokenRecord | null> {
    const [inserted] = await this.db.query<SqlRow>(scope, callOf(TOKEN_INSERT), [
      String(row.clientId), String(scope.userId), row.tokenHash, row.token.slice(0, TOKEN_PREFIX_LENGTH), row.scopes,
      row.expiresAt, row.grantId === null ? null : String(row.grantId), ...tokenAuditParams(audit),
    ]);
    return inserted ? toRecord(inserted, { token: row.token }) : null;
  }

  async find(scope: OwnerScope, id: bigint): Promise<OAuthTokenRecord | null> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM oauth_tokens t WHERE ${where} AND t.id = $${params.length + 1}`, params);
    return row ? toRecord(row) : null;
  }

  /** Keyset page, id ascending: cost does not grow with depth. */
  async listKeyset(scope: OwnerScope, clientId: bigint | undefined, page: KeysetPage): Promise<PageResult<OAuthTokenRecord>> {
    const params: unknown[] = [];
    let where = scopeSql(scope, params, clientId);
    const backward = page.before !== undefined;
    if (backward || page.after !== undefined) {
      params.push(String(backward ? page.before : page.after));
      where += ` AND t.id ${backward ? '<' : '>'} $${params.length + 1}`;
    }
    params.push(page.size + 1);
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM oauth_tokens t WHERE ${where} ORDER BY t.id ${backward ? 'DESC' : 'ASC'} LIMIT $${params.length + 1}`,
      params,
    );
    return keysetPageOf(rows, page, backward, (r) => toRecord(r));
  }

  async listOffset(scope: OwnerScope, clientId: bigint | undefined, page: OffsetPage): Promise<OAuthTokenRecord[]> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params, clientId);
    params.push(page.perPage, (page.page - 1) * page.perPage);
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM oauth_tokens t WHERE ${where} ORDER BY t.id LIMIT $${params.length} OFFSET $${params.length + 1}`,
      params,
    );
    return rows.map((r) => toRecord(r));
  }

  async count(scope: OwnerScope, clientId: bigint | undefined): Promise<number> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params, clientId);
    const [row] = await this.db.query<{ n: Int8 }>(scope, `SELECT count(*) AS n FROM oauth_tokens t WHERE ${where}`, params);
    return Number(row.n);
  }

  /** Up to `limit` live tokens of each client (within the scope), in one statement: DataLoader batching. */
  async firstByClients(scope: OwnerScope, clientIds: readonly bigint[], limit: number): Promise<OAuthTokenRecord[]> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(clientIds.map(String), limit);
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS.replace(/\bt\./g, 'l.')}
         FROM unnest($${params.length}::bigint[]) AS c(id)
         CROSS JOIN LATERAL (
           SELECT t.* FROM oauth_tokens t
            WHERE ${where} AND t.client_id = c.id
            ORDER BY t.id LIMIT $${params.length + 1}) l`,
      params,
    );
    return rows.map((r) => toRecord(r));
  }

  /** Revokes one token of the scope, with its audit record; false when the scope has no such live token. One statement. */
  async revoke(scope: OwnerScope, id: bigint, audit: TokenAudit): Promise<boolean> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const n = params.length + 1;
    params.push(...tokenAuditParams(audit));
    const rows = await this.db.query(
      scope,
      `WITH revoked AS (UPDATE oauth_tokens t SET revoked_at = now() WHERE ${where} AND t.id = $${n} RETURNING ${COLUMNS}),
       audit AS (${auditCte('revoked', 'destroy', 'oauth_token', byActor('revoked', n + 1), n + 4)}), ${tokenRevoked('revoked')}
       SELECT id FROM revoked`,
      params,
    );
    return rows.length > 0;
  }

  /**
   * Revokes every live token of a client of the scope, and every token of its
   * grants (a token of another client minted with one of this client's tokens
   * dies with them), inside the caller's transaction (deleting a client, which
   * records the change), and detaches all of them from their grants: the
   * client's grants go with it (ON DELETE CASCADE), and a token reached by both
   * cascades (client_id and grant_id SET NULL) in one statement would fail its
   * foreign key check. One statement; the number of tokens it revoked.
   */
  async revokeAllOfClient(scope: AccountScope, clientId: bigint): Promise<number> {
    const [row] = await this.db.query<{ revoked: Int8 }>(
      scope,
      `WITH touched AS (
         UPDATE oauth_tokens t SET revoked_at = COALESCE(t.revoked_at, now()), grant_id = NULL
           FROM (SELECT id, revoked_at IS NULL AS live FROM oauth_tokens
                  WHERE account_id = $1
                    AND (client_id = $2 OR grant_id IN (SELECT g.id FROM oauth_grants g WHERE g.account_id = $1 AND g.client_id = $2))
                    AND (revoked_at IS NULL OR grant_id IS NOT NULL) FOR UPDATE) o
          WHERE t.id = o.id
         RETURNING o.live
       )
       SELECT count(*) FILTER (WHERE live) AS revoked FROM touched`,
      [String(clientId)],
    );
    return Number(row.revoked);
  }

  /**
   * Revokes every token of every grant of a user of the scope's account (their
   * password changed), in the caller's transaction after the grants' own rows
   * (OAuthGrantRepository.revokeAllOfUser); the tokens it revoked, for the
   * caller's audit records. Tokens of no grant (API tokens) stay.
   */
  async revokeGrantTokensOfUser(scope: AccountScope, userId: bigint): Promise<RevokedToken[]> {
    const rows = await this.db.query<SqlRow>(
      scope,
      `UPDATE oauth_tokens t SET revoked_at = now()
         FROM oauth_grants g
        WHERE t.account_id = $1 AND g.account_id = $1 AND g.id = t.grant_id AND g.user_id = $2 AND t.revoked_at IS NULL
       RETURNING ${COLUMNS}`,
      [String(userId)],
    );
    return rows.map(revokedToken);
  }

  /**
   * Revokes every live token of a user of the scope's account, on the caller's
   * transaction (deactivating or deleting the user); returns how many.
   */
  async revokeAllOfUser(scope: AccountScope, userId: bigint): Promise<number> {
    const rows = await this.db.query(scope, 'UPDATE oauth_tokens SET revoked_at = now() WHERE account_id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id', [
      String(userId),
    ]);
    return rows.length;
  }
}
