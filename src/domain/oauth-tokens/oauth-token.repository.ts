import type { Db } from '../../db/create-db';
import type { AccountScope, OwnerScope } from '../authorization';
import { auditCte, originParams, type AuditActor, type AuditRowSql } from '../audit/audit-log.repository';
import type { KeysetPage, OffsetPage, PageResult } from '../pagination';
import type { RequestOrigin, Role } from '../auth/viewer';

// The only module that reads or writes oauth_tokens. Every statement is plain
// SQL (one statement per request on the hot paths, prepared once per connection:
// bench/tuning-log.md), and every read of records goes through scopeSql(), the
// policy's row scope (domain/authorization.ts), and through toRecord(), the one
// row mapper. Every statement that creates or revokes tokens writes their audit
// records itself (auditCte: the same statement, so the same transaction, and no
// extra round trip), except revokeAllOfClient and revokeGrant, whose callers
// record the change in their transaction (recordAudit).

export interface OAuthTokenRecord {
  id: bigint;
  accountId: bigint;
  clientId: bigint | null;
  userId: bigint;
  /** full right after create, else the first 10 characters */
  token: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  usedAt: Date | null;
  /** how the grant endpoint issued it; null for tokens made by admins */
  grantType: GrantType | null;
  /** the grant (family) it dies with: the grant endpoint's tokens, and tokens minted with one of them */
  grantId: bigint | null;
  /** full right after issue, else its first 10 characters; null when it has none */
  refreshToken: string | null;
  refreshTokenExpiresAt: Date | null;
}

export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials';

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

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; client_id: Int8 | null; user_id: Int8; token_prefix: string; scopes: string[];
  created_at: Date; expires_at: Date | null; used_at: Date | null;
  grant_type: GrantType | null; grant_id: Int8 | null; refresh_token_prefix: string | null; refresh_token_expires_at: Date | null;
}
const COLUMNS =
  "t.id, t.account_id, t.client_id, t.user_id, t.token_prefix, coalesce(t.scopes, '{}') AS scopes, t.created_at, t.expires_at, t.used_at, " +
  't.grant_type::text AS grant_type, t.grant_id, t.refresh_token_prefix, t.refresh_token_expires_at';

function toRecord(r: SqlRow, full?: { token: string; refreshToken?: string }): OAuthTokenRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), clientId: r.client_id === null ? null : BigInt(r.client_id), userId: BigInt(r.user_id),
    token: full?.token ?? r.token_prefix, scopes: r.scopes, createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at,
    grantType: r.grant_type, grantId: r.grant_id === null ? null : BigInt(r.grant_id), refreshToken: full?.refreshToken ?? r.refresh_token_prefix, refreshTokenExpiresAt: r.refresh_token_expires_at,
  };
}

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

/** A token's label in the audit log: its first 10 characters and "..." (never the token). */
const label = (cte: string) => `${cte}.token_prefix || '...'`;

/**
 * Audit columns of a change to the tokens of CTE `cte` by a known actor:
 * parameters $n (actor id), $n+1 (actor name), $n+2 (description); with
 * auditCte's origin at $n+3.. (tokenAuditParams gives all six).
 */
function byActor(cte: string, n: number): AuditRowSql {
  return {
    accountId: `${cte}.account_id`, actorId: `$${n}::bigint`, actorName: `$${n + 1}::text`,
    sourceId: `${cte}.id`, sourceLabel: label(cte), description: `$${n + 2}::text`,
  };
}
const tokenAuditParams = (a: TokenAudit) => [a.actor.actorId === null ? null : String(a.actor.actorId), a.actor.actorName, a.description, ...originParams(a.actor.origin)];

/** Audit columns of a token issued at a grant endpoint: its own user is the actor; `description` is SQL. */
function asItsUser(cte: string, description: string): AuditRowSql {
  return {
    accountId: `${cte}.account_id`, actorId: `${cte}.user_id`, actorName: `(SELECT u.name FROM users u WHERE u.id = ${cte}.user_id)`,
    sourceId: `${cte}.id`, sourceLabel: label(cte), description,
  };
}

/**
 * WHERE of the live tokens of a scope (alias t); appends its parameters. A grant
 * token whose access token expired stays while its refresh token lives.
 */
function scopeSql(scope: OwnerScope, params: unknown[], clientId?: bigint): string {
  params.push(String(scope.accountId));
  let where = `t.account_id = $${params.length} AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now() OR t.refresh_token_expires_at > now())`;
  if (scope.userId !== undefined) {
    params.push(String(scope.userId));
    where += ` AND t.user_id = $${params.length}`;
  }
  if (clientId !== undefined) {
    params.push(String(clientId));
    where += ` AND t.client_id = $${params.length}`;
  }
  return where;
}

export class OAuthTokenRepository {
  constructor(private readonly db: Pick<Db, 'sql'>) {}

  /**
   * Stores a token for one of the scope's account's clients, owned by `userId`,
   * and its audit record; null when the client is not the account's, or when
   * `grantId` names a grant that is revoked (its row is share-locked, as
   * issueForGrant does, so a family revocation running meanwhile sees this token).
   * One statement.
   */
  async insert(
    scope: { accountId: bigint; userId: bigint },
    row: { clientId: bigint; tokenHash: string; token: string; scopes: string[]; expiresAt: Date | null; grantId: bigint | null },
    audit: TokenAudit,
  ): Promise<OAuthTokenRecord | null> {
    const [inserted] = await this.db.sql<SqlRow>(
      `WITH created AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, token_hash, token_prefix, scopes, expires_at, grant_id)
         SELECT c.account_id, c.id, $3, $4, $5, $6::text[], $7::timestamptz, $8::bigint FROM oauth_clients c
          WHERE c.id = $1 AND c.account_id = $2
            AND ($8::bigint IS NULL OR EXISTS (SELECT 1 FROM oauth_grants g WHERE g.id = $8::bigint AND g.revoked_at IS NULL FOR SHARE OF g))
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('created', 'create', 'oauth_token', byActor('created', 9), 12)})
       SELECT * FROM created`,
      [
        String(row.clientId), String(scope.accountId), String(scope.userId), row.tokenHash, row.token.slice(0, TOKEN_PREFIX_LENGTH), row.scopes,
        row.expiresAt, row.grantId === null ? null : String(row.grantId), ...tokenAuditParams(audit),
      ],
    );
    return inserted ? toRecord(inserted, { token: row.token }) : null;
  }

  async find(scope: OwnerScope, id: bigint): Promise<OAuthTokenRecord | null> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const [row] = await this.db.sql<SqlRow>(`SELECT ${COLUMNS} FROM oauth_tokens t WHERE ${where} AND t.id = $${params.length}`, params);
    return row ? toRecord(row) : null;
  }

  /**
   * The live, unexpired token with this hash, whose user is active and whose
   * client exists, in one statement with the used_at touch (at most once a
   * minute; the guard, re-checked on the locked row, makes racing processes
   * write once). With a subdomain, only a token of that account is found.
   */
  async findPresented(tokenHash: string, subdomain: string | undefined): Promise<PresentedTokenRow | null> {
    const [row] = await this.db.sql<SqlRow & { client_scopes: string; role: Role; email: string; name: string }>(
      `WITH found AS (
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
       SELECT found.id, found.account_id, found.user_id, found.scopes, found.client_id, found.token_prefix, found.created_at,
              found.expires_at, COALESCE((SELECT used_at FROM touched), found.used_at) AS used_at,
              found.grant_type, found.grant_id, found.refresh_token_prefix, found.refresh_token_expires_at,
              found.client_scopes, found.role, found.email, found.name
         FROM found`,
      [tokenHash, subdomain ?? null],
    );
    if (!row) return null;
    return { record: toRecord(row), clientScopes: row.client_scopes, role: row.role, email: row.email, name: row.name };
  }

  /** Keyset page, id ascending: cost does not grow with depth. */
  async listKeyset(scope: OwnerScope, clientId: bigint | undefined, page: KeysetPage): Promise<PageResult<OAuthTokenRecord>> {
    const params: unknown[] = [];
    let where = scopeSql(scope, params, clientId);
    const backward = page.before !== undefined;
    if (backward || page.after !== undefined) {
      params.push(String(backward ? page.before : page.after));
      where += ` AND t.id ${backward ? '<' : '>'} $${params.length}`;
    }
    params.push(page.size + 1);
    const rows = await this.db.sql<SqlRow>(
      `SELECT ${COLUMNS} FROM oauth_tokens t WHERE ${where} ORDER BY t.id ${backward ? 'DESC' : 'ASC'} LIMIT $${params.length}`,
      params,
    );
    const more = rows.length > page.size;
    const items = rows.slice(0, page.size).map((r) => toRecord(r));
    if (backward) items.reverse();
    return {
      items,
      hasNextPage: backward ? true : more,
      hasPreviousPage: backward ? more : page.after !== undefined,
    };
  }

  async listOffset(scope: OwnerScope, clientId: bigint | undefined, page: OffsetPage): Promise<OAuthTokenRecord[]> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params, clientId);
    params.push(page.perPage, (page.page - 1) * page.perPage);
    const rows = await this.db.sql<SqlRow>(
      `SELECT ${COLUMNS} FROM oauth_tokens t WHERE ${where} ORDER BY t.id LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map((r) => toRecord(r));
  }

  async count(scope: OwnerScope, clientId: bigint | undefined): Promise<number> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params, clientId);
    const [row] = await this.db.sql<{ n: Int8 }>(`SELECT count(*) AS n FROM oauth_tokens t WHERE ${where}`, params);
    return Number(row.n);
  }

  /** Up to `limit` live tokens of each client (within the scope), in one statement: DataLoader batching. */
  async firstByClients(scope: OwnerScope, clientIds: readonly bigint[], limit: number): Promise<OAuthTokenRecord[]> {
    const params: unknown[] = [clientIds.map(String), limit];
    const where = scopeSql(scope, params);
    const rows = await this.db.sql<SqlRow>(
      `SELECT ${COLUMNS.replace(/\bt\./g, 'l.')}
         FROM unnest($1::bigint[]) AS c(id)
         CROSS JOIN LATERAL (
           SELECT t.* FROM oauth_tokens t
            WHERE ${where} AND t.client_id = c.id
            ORDER BY t.id LIMIT $2) l`,
      params,
    );
    return rows.map((r) => toRecord(r));
  }

  /** Revokes one token of the scope, with its audit record; false when the scope has no such live token. One statement. */
  async revoke(scope: OwnerScope, id: bigint, audit: TokenAudit): Promise<boolean> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const n = params.length;
    params.push(...tokenAuditParams(audit));
    const rows = await this.db.sql(
      `WITH revoked AS (UPDATE oauth_tokens t SET revoked_at = now() WHERE ${where} AND t.id = $${n} RETURNING t.id, t.account_id, t.token_prefix),
       audit AS (${auditCte('revoked', 'destroy', 'oauth_token', byActor('revoked', n + 1), n + 4)})
       SELECT id FROM revoked`,
      params,
    );
    return rows.length > 0;
  }

  /**
   * Revokes a token by id (the presented token revoking itself, /oauth/revoke),
   * with its audit record; false when it was revoked already. One statement.
   */
  async revokeById(id: bigint, audit: TokenAudit): Promise<boolean> {
    const rows = await this.db.sql(
      `WITH revoked AS (UPDATE oauth_tokens t SET revoked_at = now() WHERE t.id = $1 AND t.revoked_at IS NULL RETURNING t.id, t.account_id, t.token_prefix),
       audit AS (${auditCte('revoked', 'destroy', 'oauth_token', byActor('revoked', 2), 5)})
       SELECT id FROM revoked`,
      [String(id), ...tokenAuditParams(audit)],
    );
    return rows.length > 0;
  }

  /**
   * Revokes every live token of a client, and every token of its grants (a token
   * of another client minted with one of this client's tokens dies with them),
   * inside the caller's transaction (deleting a client, which records the
   * change), and detaches all of them from their grants: the client's grants go
   * with it (ON DELETE CASCADE), and a token reached by both cascades (client_id
   * and grant_id SET NULL) in one statement would fail its foreign key check. One
   * statement; the number of tokens it revoked.
   */
  async revokeAllOfClient(clientId: bigint): Promise<number> {
    const [row] = await this.db.sql<{ revoked: Int8 }>(
      `WITH touched AS (
         UPDATE oauth_tokens t SET revoked_at = COALESCE(t.revoked_at, now()), grant_id = NULL
           FROM (SELECT id, revoked_at IS NULL AS live FROM oauth_tokens
                  WHERE (client_id = $1 OR grant_id IN (SELECT g.id FROM oauth_grants g WHERE g.client_id = $1))
                    AND (revoked_at IS NULL OR grant_id IS NOT NULL) FOR UPDATE) o
          WHERE t.id = o.id
         RETURNING o.live
       )
       SELECT count(*) FILTER (WHERE live) AS revoked FROM touched`,
      [String(clientId)],
    );
    return Number(row.revoked);
  }

  // ------------------------------------------------------------------ the grant endpoint

  /**
   * A token (with its refresh token) for a grant that is not revoked and whose
   * user is active; null otherwise. The grant's row is share-locked until the
   * caller's transaction ends, so a family revocation (which updates that row
   * first) waits for this token and then sees it.
   */
  async issueForGrant(grantId: bigint, grantType: GrantType, t: NewGrantToken, audit: GrantAudit): Promise<OAuthTokenRecord | null> {
    const [row] = await this.db.sql<SqlRow>(
      `WITH issued AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, scopes, grant_type, grant_id, ${GRANT_TOKEN_COLUMNS})
         SELECT g.account_id, g.client_id, g.user_id, g.scopes, $2::"OAuthGrantType", g.id, ${grantTokenValues(3)}
           FROM oauth_grants g JOIN users u ON u.id = g.user_id AND u.active
          WHERE g.id = $1 AND g.revoked_at IS NULL
            FOR SHARE OF g
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('issued', 'create', 'oauth_token', asItsUser('issued', '$9::text'), 10)})
       SELECT * FROM issued`,
      [String(grantId), grantType, ...grantTokenParams(t), audit.description, ...originParams(audit.origin)],
    );
    return row ? toRecord(row, { token: t.token, refreshToken: t.refresh?.token }) : null;
  }

  /** A client-credentials token: it acts as the admin who created the client, while that user is active. No refresh token. */
  async issueForClient(clientId: bigint, scopes: string[], t: NewGrantToken, audit: GrantAudit): Promise<OAuthTokenRecord | null> {
    const [row] = await this.db.sql<SqlRow>(
      `WITH issued AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, scopes, grant_type, ${GRANT_TOKEN_COLUMNS})
         SELECT c.account_id, c.id, c.agent_id, $2::text[], 'client_credentials', ${grantTokenValues(3)}
           FROM oauth_clients c JOIN users u ON u.id = c.agent_id AND u.account_id = c.account_id AND u.active
          WHERE c.id = $1
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('issued', 'create', 'oauth_token', asItsUser('issued', '$9::text'), 10)})
       SELECT * FROM issued`,
      [String(clientId), scopes, ...grantTokenParams(t), audit.description, ...originParams(audit.origin)],
    );
    return row ? toRecord(row, { token: t.token }) : null;
  }

  /**
   * Refresh-token rotation in one statement: the presented refresh token (live,
   * of this client, not rotated yet, covering `scopes` when given) is marked used
   * and its token revoked, and a new token of the same grant is inserted, with
   * the same or the narrowed scopes. The row lock makes two racing processes
   * rotate once: the second finds it used. The new token's audit record says
   * which token it rotated (`audit.description` followed by the old token's id).
   * Null when nothing was rotated.
   */
  async rotateRefresh(refreshHash: string, clientId: bigint, scopes: string[] | undefined, t: NewGrantToken, audit: GrantAudit): Promise<OAuthTokenRecord | null> {
    const [row] = await this.db.sql<SqlRow>(
      `WITH old AS (
         UPDATE oauth_tokens o SET refresh_token_used_at = now(), revoked_at = now()
          WHERE o.refresh_token_hash = $1 AND o.client_id = $2 AND o.refresh_token_used_at IS NULL AND o.revoked_at IS NULL
            AND o.refresh_token_expires_at > now() AND ($3::text[] IS NULL OR $3::text[] <@ o.scopes)
         RETURNING o.id, o.account_id, o.client_id, o.user_id, o.scopes, o.grant_id
       ), family AS (
         SELECT g.id FROM oauth_grants g JOIN old ON g.id = old.grant_id WHERE g.revoked_at IS NULL FOR SHARE OF g
       ), issued AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, scopes, grant_type, grant_id, ${GRANT_TOKEN_COLUMNS})
         SELECT old.account_id, old.client_id, old.user_id, COALESCE($3::text[], old.scopes), 'refresh_token', old.grant_id, ${grantTokenValues(4)}
           FROM old JOIN family ON family.id = old.grant_id JOIN users u ON u.id = old.user_id AND u.active
         RETURNING ${COLUMNS}
       ), audit AS (${auditCte('issued CROSS JOIN old', 'create', 'oauth_token', asItsUser('issued', '$10::text || old.id'), 11)})
       SELECT * FROM issued`,
      [refreshHash, String(clientId), scopes ?? null, ...grantTokenParams(t), audit.description, ...originParams(audit.origin)],
    );
    return row ? toRecord(row, { token: t.token, refreshToken: t.refresh?.token }) : null;
  }

  /** The token whose access or refresh token has this hash, with what revocation and introspection need. */
  async findByEitherHash(hash: string): Promise<PresentedHashRow | null> {
    const [r] = await this.db.sql<{
      id: Int8; account_id: Int8; client_id: Int8 | null; grant_id: Int8 | null; is_access: boolean; live: boolean; refresh_used: boolean;
      scopes: string[]; created_at: Date; expires_at: Date | null; client_identifier: string | null; user_id: Int8; email: string; name: string;
    }>(
      `SELECT t.id, t.account_id, t.client_id, t.grant_id, t.token_hash = $1 AS is_access, coalesce(t.scopes, '{}') AS scopes, t.created_at,
              t.refresh_token_used_at IS NOT NULL AS refresh_used,
              CASE WHEN t.token_hash = $1 THEN t.expires_at ELSE t.refresh_token_expires_at END AS expires_at,
              t.revoked_at IS NULL AND u.active AND c.id IS NOT NULL AND CASE WHEN t.token_hash = $1
                THEN t.expires_at IS NULL OR t.expires_at > now()
                ELSE t.refresh_token_used_at IS NULL AND t.refresh_token_expires_at > now() END AS live,
              c.identifier AS client_identifier, u.id AS user_id, u.email, u.name
         FROM oauth_tokens t
         JOIN users u ON u.id = t.user_id
         LEFT JOIN oauth_clients c ON c.id = t.client_id
        WHERE t.token_hash = $1 OR t.refresh_token_hash = $1`,
      [hash],
    );
    if (!r) return null;
    return {
      id: BigInt(r.id), accountId: BigInt(r.account_id), clientId: r.client_id === null ? null : BigInt(r.client_id),
      grantId: r.grant_id === null ? null : BigInt(r.grant_id), kind: r.is_access ? 'access' : 'refresh', live: r.live, refreshUsed: r.refresh_used,
      scopes: r.scopes, createdAt: r.created_at, expiresAt: r.expires_at, clientIdentifier: r.client_identifier, userId: BigInt(r.user_id), email: r.email,
      name: r.name,
    };
  }

  /**
   * Revokes every live token of a user of the scope's account, on the caller's
   * transaction (deactivating or deleting the user); returns how many.
   */
  async revokeAllOfUser(scope: AccountScope, userId: bigint): Promise<number> {
    const rows = await this.db.sql('UPDATE oauth_tokens SET revoked_at = now() WHERE account_id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id', [
      String(scope.accountId),
      String(userId),
    ]);
    return rows.length;
  }

  /**
   * Revokes every token of every grant of a user of the scope's account (their
   * password changed), in the caller's transaction after the grants' own rows
   * (OAuthGrantRepository.revokeAllOfUser); the tokens it revoked, for the
   * caller's audit records. Tokens of no grant (API tokens) stay.
   */
  async revokeGrantTokensOfUser(scope: AccountScope, userId: bigint): Promise<RevokedToken[]> {
    const rows = await this.db.sql<{ id: Int8; account_id: Int8; user_id: Int8; token_prefix: string }>(
      `UPDATE oauth_tokens t SET revoked_at = now()
         FROM oauth_grants g
        WHERE g.id = t.grant_id AND g.account_id = $1 AND g.user_id = $2 AND t.revoked_at IS NULL
       RETURNING t.id, t.account_id, t.user_id, t.token_prefix`,
      [String(scope.accountId), String(userId)],
    );
    return rows.map((r) => ({ id: BigInt(r.id), accountId: BigInt(r.account_id), userId: BigInt(r.user_id), prefix: r.token_prefix }));
  }

  /**
   * Revokes every token of a grant (a family), in the caller's transaction after
   * the grant's own row; the tokens it revoked, for the caller's audit records.
   */
  async revokeGrant(grantId: bigint): Promise<RevokedToken[]> {
    const rows = await this.db.sql<{ id: Int8; account_id: Int8; user_id: Int8; token_prefix: string }>(
      'UPDATE oauth_tokens SET revoked_at = now() WHERE grant_id = $1 AND revoked_at IS NULL RETURNING id, account_id, user_id, token_prefix',
      [String(grantId)],
    );
    return rows.map((r) => ({ id: BigInt(r.id), accountId: BigInt(r.account_id), userId: BigInt(r.user_id), prefix: r.token_prefix }));
  }
}
