import type { PrismaClient } from '../../generated/prisma/client';
import type { SqlQuery } from '../../db/create-db';
import { BadRequestError, NotFoundError, ValidationError, Validator } from '../errors';
import { hmacHex, randomUrlSafe } from '../crypto';
import { parseId } from '../ids';
import { checkOffsetPage, type KeysetPage, type OffsetPage, type PageResult } from '../pagination';
import type { Viewer } from '../auth/viewer';

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

const TOKEN_PREFIX_LENGTH = 10;
const SELECT = {
  id: true, accountId: true, clientId: true, userId: true, tokenPrefix: true, scopes: true,
  createdAt: true, expiresAt: true, usedAt: true,
} as const;
type Row = { tokenPrefix: string } & Omit<OAuthTokenRecord, 'token'>;

function toRecord({ tokenPrefix, ...row }: Row, fullToken?: string): OAuthTokenRecord {
  return { ...row, token: fullToken ?? tokenPrefix };
}

// The request paths (show, list, create) use plain SQL: one statement each,
// without Prisma's query building and result mapping (measured in bench/tuning-log.md).
const COLUMNS = 'id, account_id, client_id, user_id, token_prefix, coalesce(scopes, \'{}\') AS scopes, created_at, expires_at, used_at';
type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; client_id: Int8 | null; user_id: Int8; token_prefix: string; scopes: string[];
  created_at: Date; expires_at: Date | null; used_at: Date | null;
}
function fromSql(r: SqlRow): Row {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), clientId: r.client_id === null ? null : BigInt(r.client_id), userId: BigInt(r.user_id),
    tokenPrefix: r.token_prefix, scopes: r.scopes, createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at,
  };
}

export interface CreateTokenInput {
  clientId?: unknown;
  scopes?: unknown;
}

/**
 * OAuth access tokens (API.md §6). Role checks happen in the resolvers; here:
 * tenancy, ownership (non-admins reach only their own tokens), validation.
 */
export class OAuthTokenService {
  constructor(private readonly prisma: PrismaClient, private readonly hashKey: Buffer, private readonly sql: SqlQuery) {}

  /** WHERE of the tokens the viewer may see, as SQL; params[0] is the account. */
  private visibleSql(viewer: Viewer, params: unknown[]): string {
    params.push(String(viewer.accountId));
    if (viewer.role === 'admin') return 'account_id = $1 AND revoked_at IS NULL';
    params.push(String(viewer.userId));
    return 'account_id = $1 AND revoked_at IS NULL AND user_id = $2';
  }

  /** Tokens the viewer may see: the account's for admins, their own for everyone else. */
  private visible(viewer: Viewer) {
    return {
      accountId: viewer.accountId,
      revokedAt: null,
      ...(viewer.role === 'admin' ? {} : { userId: viewer.userId }),
    };
  }

  async create(viewer: Viewer, input: CreateTokenInput): Promise<OAuthTokenRecord> {
    const v = new Validator();
    let clientId: bigint | null = null;
    if (input.clientId === undefined || input.clientId === null || input.clientId === '') v.add('client_id', 'BlankValue', 'Client: cannot be blank');
    else {
      clientId = parseId(input.clientId);
      if (clientId === null) v.add('client_id', 'InvalidValue', 'Client: must be a positive integer');
    }
    const scopes = input.scopes;
    if (scopes === undefined || scopes === null || (Array.isArray(scopes) && scopes.length === 0)) v.add('scopes', 'BlankValue', 'Scopes: cannot be blank');
    else if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) v.add('scopes', 'InvalidValue', 'Scopes: must be an array of strings');
    else if (scopes.length > 50 || scopes.some((s: string) => s.length > 100)) v.add('scopes', 'TooLong', 'Scopes: at most 50 scopes of at most 100 characters');
    // Invalid scopes are stored as given (seed §4.3 rule 6), but PostgreSQL text cannot hold NUL.
    else if (scopes.some((s: string) => s.includes('\0'))) v.add('scopes', 'InvalidValue', 'Scopes: must not contain NUL characters');
    v.throwIfAny();
    const token = randomUrlSafe(32); // 256 bits, 43 url-safe characters
    // One statement: inserted only if the client is one of the account's.
    const [row] = await this.sql<SqlRow>(
      `INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes)
       SELECT c.account_id, c.id, $3, $4, $5, $6::text[] FROM oauth_clients c WHERE c.id = $1 AND c.account_id = $2
       RETURNING ${COLUMNS}`,
      // As given: invalid scopes are kept, and make every request with the token fail (seed §4.3 rule 6).
      [String(clientId), String(viewer.accountId), String(viewer.userId), hmacHex(this.hashKey, token), token.slice(0, TOKEN_PREFIX_LENGTH), scopes as string[]],
    );
    if (!row) throw new ValidationError({ client_id: [{ error: 'NotFound', description: `Client: ${clientId} was not found` }] });
    return toRecord(fromSql(row), token);
  }

  async find(viewer: Viewer, rawId: unknown): Promise<OAuthTokenRecord | null> {
    const id = parseId(rawId);
    if (id === null) return null;
    const params: unknown[] = [];
    const where = this.visibleSql(viewer, params);
    params.push(String(id));
    const [row] = await this.sql<SqlRow>(`SELECT ${COLUMNS} FROM oauth_tokens WHERE ${where} AND id = $${params.length}`, params);
    return row ? toRecord(fromSql(row)) : null;
  }

  /** The token that authenticated this request; Basic auth presents none (→ 400). */
  async findCurrent(viewer: Viewer): Promise<OAuthTokenRecord> {
    if (!viewer.token) throw new BadRequestError('No access token was presented: use Authorization: Bearer <token>');
    // The authenticator has just read the live row (the hot path: one statement per request).
    if (viewer.token.row) return toRecord({ id: viewer.token.id, ...viewer.token.row });
    const row = await this.prisma.oAuthToken.findFirst({ where: { id: viewer.token.id, revokedAt: null }, select: SELECT });
    if (!row) throw new NotFoundError();
    return toRecord(row);
  }

  async revoke(viewer: Viewer, rawId: unknown): Promise<void> {
    const id = parseId(rawId);
    if (id === null) throw new NotFoundError();
    const { count } = await this.prisma.oAuthToken.updateMany({ where: { id, ...this.visible(viewer) }, data: { revokedAt: new Date() } });
    if (count === 0) throw new NotFoundError();
  }

  async revokeCurrent(viewer: Viewer): Promise<void> {
    if (!viewer.token) throw new BadRequestError('No access token was presented: use Authorization: Bearer <token>');
    await this.prisma.oAuthToken.updateMany({ where: { id: viewer.token.id, revokedAt: null }, data: { revokedAt: new Date() } });
  }

  private listWhere(viewer: Viewer, clientId: unknown) {
    const where: Record<string, unknown> = this.visible(viewer);
    if (clientId !== undefined && clientId !== null) {
      const id = parseId(clientId);
      // An unknown client filters to nothing, like an unknown id anywhere else.
      where.clientId = id ?? -1n;
    }
    return where;
  }

  /** Keyset page, id ascending: cost does not grow with depth. */
  async listKeyset(viewer: Viewer, clientId: unknown, page: KeysetPage): Promise<PageResult<OAuthTokenRecord>> {
    const params: unknown[] = [];
    let where = this.visibleSql(viewer, params);
    if (clientId !== undefined && clientId !== null) {
      // An unknown client filters to nothing, like an unknown id anywhere else.
      params.push(String(parseId(clientId) ?? -1n));
      where += ` AND client_id = $${params.length}`;
    }
    const backward = page.before !== undefined;
    if (backward || page.after !== undefined) {
      params.push(String(backward ? page.before : page.after));
      where += ` AND id ${backward ? '<' : '>'} $${params.length}`;
    }
    params.push(page.size + 1);
    const rows = await this.sql<SqlRow>(
      `SELECT ${COLUMNS} FROM oauth_tokens WHERE ${where} ORDER BY id ${backward ? 'DESC' : 'ASC'} LIMIT $${params.length}`,
      params,
    );
    const more = rows.length > page.size;
    const items = rows.slice(0, page.size).map((r) => toRecord(fromSql(r)));
    if (backward) items.reverse();
    return {
      items,
      hasNextPage: backward ? true : more,
      hasPreviousPage: backward ? more : page.after !== undefined,
    };
  }

  async listOffset(viewer: Viewer, clientId: unknown, page: OffsetPage): Promise<OAuthTokenRecord[]> {
    checkOffsetPage(page);
    const rows = await this.prisma.oAuthToken.findMany({
      where: this.listWhere(viewer, clientId),
      orderBy: { id: 'asc' },
      skip: (page.page - 1) * page.perPage,
      take: page.perPage,
      select: SELECT,
    });
    return rows.map((r) => toRecord(r));
  }

  count(viewer: Viewer, clientId: unknown): Promise<number> {
    return this.prisma.oAuthToken.count({ where: this.listWhere(viewer, clientId) });
  }

  /** Up to `limit` live tokens per client in one statement, for DataLoader batching of OAuthClient.tokens. */
  async firstByClients(accountId: bigint, clientIds: readonly bigint[], limit: number): Promise<OAuthTokenRecord[]> {
    const rows = await this.prisma.$queryRawUnsafe<
      { id: bigint; account_id: bigint; client_id: bigint; user_id: bigint; token_prefix: string; scopes: string[]; created_at: Date; expires_at: Date | null; used_at: Date | null }[]
    >(
      `SELECT t.id, t.account_id, t.client_id, t.user_id, t.token_prefix, t.scopes, t.created_at, t.expires_at, t.used_at
         FROM unnest($2::bigint[]) AS c(id)
         CROSS JOIN LATERAL (
           SELECT * FROM oauth_tokens t
            WHERE t.account_id = $1 AND t.client_id = c.id AND t.revoked_at IS NULL
            ORDER BY t.id LIMIT $3) t`,
      accountId,
      clientIds.map(String),
      limit,
    );
    return rows.map((r) =>
      toRecord({
        id: BigInt(r.id), accountId: BigInt(r.account_id), clientId: BigInt(r.client_id), userId: BigInt(r.user_id),
        tokenPrefix: r.token_prefix, scopes: r.scopes, createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at,
      }),
    );
  }
}
