import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { keysetPageOf, type KeysetPage, type OffsetPage, type PageResult } from '../pagination';

// The only module that reads or writes api_tokens (docs/api.md, "API tokens"), every
// statement scoped to the account. The sign-in lookup by hash, which comes before any
// account is known, is folded into the Basic login's one statement (auth/login.repository.ts).

export interface ApiTokenRecord {
  id: bigint;
  accountId: bigint;
  description: string;
  /** the full token right after create, else its first characters followed by "..." */
  token: string;
  createdBy: bigint | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** How many of a token's first characters a list shows (then "..."), as OAuth tokens show 10. */
export const API_TOKEN_PREFIX_LENGTH = 10;

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; description: string; token_prefix: string; created_by: Int8 | null; created_at: Date; last_used_at: Date | null;
}
const COLUMNS = 't.id, t.account_id, t.description, t.token_prefix, t.created_by, t.created_at, t.last_used_at';

function toRecord(r: SqlRow, fullToken?: string): ApiTokenRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), description: r.description, token: fullToken ?? `${r.token_prefix}...`,
    createdBy: r.created_by === null ? null : BigInt(r.created_by), createdAt: r.created_at, lastUsedAt: r.last_used_at,
  };
}

export interface NewApiToken {
  description: string;
  token: string;
  tokenHash: string;
}

export class ApiTokenRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: AccountScope, id: bigint): Promise<ApiTokenRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM api_tokens t WHERE t.account_id = $1 AND t.id = $2`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /** Keyset page, id ascending (backward when `before` is set). */
  async listKeyset(scope: AccountScope, page: KeysetPage): Promise<PageResult<ApiTokenRecord>> {
    const backward = page.before !== undefined;
    const cursor = backward ? page.before : page.after;
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM api_tokens t
        WHERE t.account_id = $1 AND ($2::bigint IS NULL OR t.id ${backward ? '<' : '>'} $2::bigint)
        ORDER BY t.id ${backward ? 'DESC' : 'ASC'} LIMIT $3`,
      [cursor === undefined ? null : String(cursor), page.size + 1],
    );
    return keysetPageOf(rows, page, backward, (r) => toRecord(r));
  }

  async listOffset(scope: AccountScope, page: OffsetPage): Promise<ApiTokenRecord[]> {
    const rows = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM api_tokens t WHERE t.account_id = $1 ORDER BY t.id LIMIT $2 OFFSET $3`, [
      page.perPage,
      (page.page - 1) * page.perPage,
    ]);
    return rows.map((r) => toRecord(r));
  }

  async count(scope: AccountScope): Promise<number> {
    const [row] = await this.db.query<{ n: Int8 }>(scope, 'SELECT count(*) AS n FROM api_tokens t WHERE t.account_id = $1');
    return Number(row.n);
  }

  /** A new token of the account, returned with its full value (this once). */
  async insert(scope: AccountScope & { createdBy: bigint }, token: NewApiToken, prefixLength: number): Promise<ApiTokenRecord> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      `INSERT INTO api_tokens (account_id, description, token_hash, token_prefix, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS.replace(/t\./g, '')}`,
      [token.description, token.tokenHash, token.token.slice(0, prefixLength), String(scope.createdBy)],
    );
    return toRecord(row, token.token);
  }

  /** Deletes the token (the row is gone: it fails on the very next sign-in); null when the account has none with this id. */
  async delete(scope: AccountScope, id: bigint): Promise<ApiTokenRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `DELETE FROM api_tokens t WHERE t.account_id = $1 AND t.id = $2 RETURNING ${COLUMNS}`, [String(id)]);
    return row ? toRecord(row) : null;
  }
}
