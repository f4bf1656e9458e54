import type { Db } from '../../db/create-db';
import type { PrismaClient, Prisma } from '../../generated/prisma/client';
import type { OwnerScope } from '../authorization';
import type { KeysetPage, OffsetPage, PageResult } from '../pagination';
import type { Role } from '../auth/viewer';

// The only module that reads or writes oauth_tokens. Every statement is plain
// SQL (one statement per request on the hot paths, prepared once per connection:
// bench/tuning-log.md), and every read of records goes through scopeSql(), the
// policy's row scope (domain/authorization.ts), and through toRecord(), the one
// row mapper.

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
}
const COLUMNS = "t.id, t.account_id, t.client_id, t.user_id, t.token_prefix, coalesce(t.scopes, '{}') AS scopes, t.created_at, t.expires_at, t.used_at";

function toRecord(r: SqlRow, fullToken?: string): OAuthTokenRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), clientId: r.client_id === null ? null : BigInt(r.client_id), userId: BigInt(r.user_id),
    token: fullToken ?? r.token_prefix, scopes: r.scopes, createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at,
  };
}

/** WHERE of the live tokens of a scope (alias t); appends its parameters. */
function scopeSql(scope: OwnerScope, params: unknown[], clientId?: bigint): string {
  params.push(String(scope.accountId));
  let where = `t.account_id = $${params.length} AND t.revoked_at IS NULL`;
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
  constructor(private readonly db: Pick<Db, 'sql' | 'prisma'>) {}

  /**
   * Stores a token for one of the scope's account's clients, owned by `userId`;
   * null when the client is not the account's. One statement.
   */
  async insert(
    scope: { accountId: bigint; userId: bigint },
    row: { clientId: bigint; tokenHash: string; token: string; scopes: string[] },
  ): Promise<OAuthTokenRecord | null> {
    const [inserted] = await this.db.sql<SqlRow>(
      `INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, token_hash, token_prefix, scopes)
       SELECT c.account_id, c.id, $3, $4, $5, $6::text[] FROM oauth_clients c WHERE c.id = $1 AND c.account_id = $2
       RETURNING ${COLUMNS}`,
      [String(row.clientId), String(scope.accountId), String(scope.userId), row.tokenHash, row.token.slice(0, TOKEN_PREFIX_LENGTH), row.scopes],
    );
    return inserted ? toRecord(inserted, row.token) : null;
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

  /** Revokes one token of the scope; false when the scope has no such live token. */
  async revoke(scope: OwnerScope, id: bigint): Promise<boolean> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const rows = await this.db.sql(`UPDATE oauth_tokens t SET revoked_at = now() WHERE ${where} AND t.id = $${params.length} RETURNING t.id`, params);
    return rows.length > 0;
  }

  /** Revokes a token by id (the presented token revoking itself). */
  async revokeById(id: bigint): Promise<void> {
    await this.db.sql('UPDATE oauth_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [String(id)]);
  }

  /** Revokes every live token of a client, inside the caller's transaction (deleting a client). */
  async revokeAllOfClient(tx: Prisma.TransactionClient | PrismaClient, clientId: bigint): Promise<void> {
    await tx.oAuthToken.updateMany({ where: { clientId, revokedAt: null }, data: { revokedAt: new Date() } });
  }
}
