import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import type { OffsetPage } from '../pagination';

// The only module that reads or writes groups. Every statement is scoped to the
// account; every record goes through toRecord(), the one row mapper. Writes run
// on the caller's transaction.

export interface GroupRecord {
  id: bigint;
  accountId: bigint;
  name: string;
  description: string;
  createdAt: Date;
  updatedAt: Date | null;
}

export interface GroupChanges {
  name?: string;
  description?: string;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; name: string; description: string; created_at: Date; updated_at: Date | null;
}
const COLUMNS = 'g.id, g.account_id, g.name, g.description, g.created_at, g.updated_at';

function toRecord(r: SqlRow): GroupRecord {
  return { id: BigInt(r.id), accountId: BigInt(r.account_id), name: r.name, description: r.description, createdAt: r.created_at, updatedAt: r.updated_at };
}

const WRITABLE = [
  ['name', 'name'],
  ['description', 'description'],
] as const;

export class GroupRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: AccountScope, id: bigint, lock = false): Promise<GroupRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM groups g WHERE g.account_id = $1 AND g.id = $2${lock ? ' FOR UPDATE' : ''}`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /** id ascending */
  async list(scope: AccountScope, page: OffsetPage): Promise<GroupRecord[]> {
    const rows = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM groups g WHERE g.account_id = $1 ORDER BY g.id LIMIT $2 OFFSET $3`, [page.perPage, (page.page - 1) * page.perPage]);
    return rows.map(toRecord);
  }

  async count(scope: AccountScope): Promise<number> {
    const [row] = await this.db.query<{ n: Int8 }>(scope, 'SELECT count(*) AS n FROM groups g WHERE g.account_id = $1');
    return Number(row.n);
  }

  async insert(scope: AccountScope, row: { name: string; description: string }): Promise<GroupRecord> {
    const [inserted] = await this.db.query<SqlRow>(scope, `INSERT INTO groups AS g (account_id, name, description) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`, [row.name, row.description]);
    return toRecord(inserted);
  }

  /** Sets the given fields and updated_at; one statement text for any subset. */
  async update(scope: AccountScope, id: bigint, changes: GroupChanges): Promise<GroupRecord | null> {
    const params: unknown[] = [String(id)];
    const sets = WRITABLE.map(([key, column]) => {
      const given = changes[key] !== undefined;
      params.push(given, given ? changes[key] : null);
      return `${column} = CASE WHEN $${params.length}::boolean THEN $${params.length + 1}::text ELSE g.${column} END`;
    });
    const [row] = await this.db.query<SqlRow>(
      scope,
      `UPDATE groups g SET ${sets.join(', ')}, updated_at = now() WHERE g.account_id = $1 AND g.id = $2 RETURNING ${COLUMNS}`,
      params,
    );
    return row ? toRecord(row) : null;
  }

  /** Deletes the group; callback requests keep the ids they asked for (arrays, no foreign key). */
  async delete(scope: AccountScope, id: bigint): Promise<GroupRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `DELETE FROM groups g WHERE g.account_id = $1 AND g.id = $2 RETURNING ${COLUMNS}`, [String(id)]);
    return row ? toRecord(row) : null;
  }
}
