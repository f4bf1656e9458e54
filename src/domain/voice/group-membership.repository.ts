import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import type { OffsetPage } from '../pagination';

// The only module that reads or writes group memberships (which agents a group
// routes to). Every statement is scoped to the account; every record goes through
// toRecord(), the one row mapper. Writes run on the caller's transaction. A
// membership names its user and group by id within the account (composite foreign
// keys, ON DELETE CASCADE): deleting a group removes its memberships with it.

export interface GroupMembershipRecord {
  id: bigint;
  accountId: bigint;
  userId: bigint;
  groupId: bigint;
  createdAt: Date;
  updatedAt: Date;
}

/** A removed membership, with the names of its user and group (the audit record's label). */
export interface RemovedGroupMembership extends GroupMembershipRecord {
  userName: string;
  groupName: string;
}

/** Which memberships a list reads: the account's, or one group's, or one user's (or one pair's). */
export interface GroupMembershipFilter {
  groupId?: bigint;
  userId?: bigint;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; user_id: Int8; group_id: Int8; created_at: Date; updated_at: Date;
}
const COLUMNS = 'm.id, m.account_id, m.user_id, m.group_id, m.created_at, m.updated_at';

function toRecord(r: SqlRow): GroupMembershipRecord {
  return { id: BigInt(r.id), accountId: BigInt(r.account_id), userId: BigInt(r.user_id), groupId: BigInt(r.group_id), createdAt: r.created_at, updatedAt: r.updated_at };
}

function toRemoved(r: SqlRow & { user_name: string; group_name: string }): RemovedGroupMembership {
  return { ...toRecord(r), userName: r.user_name, groupName: r.group_name };
}

/**
 * WHERE of a filter (alias m) after the account's (TenantSql binds $1); appends
 * its parameters, which are $2, $3, … (as users' scopeSql does).
 */
function filterSql(filter: GroupMembershipFilter, params: unknown[]): string {
  let where = 'm.account_id = $1';
  if (filter.groupId !== undefined) {
    params.push(String(filter.groupId));
    where += ` AND m.group_id = $${params.length + 1}`;
  }
  if (filter.userId !== undefined) {
    params.push(String(filter.userId));
    where += ` AND m.user_id = $${params.length + 1}`;
  }
  return where;
}

/** DELETE … RETURNING with the names of the user and group of each row (they still exist: a group's cascade runs after). */
const DELETE_RETURNING = `USING users u, groups g
  WHERE u.account_id = $1 AND u.id = m.user_id AND g.account_id = $1 AND g.id = m.group_id`;
const REMOVED_COLUMNS = `${COLUMNS}, u.name AS user_name, g.name AS group_name`;

export class GroupMembershipRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: AccountScope, id: bigint): Promise<GroupMembershipRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM group_memberships m WHERE m.account_id = $1 AND m.id = $2`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /** id ascending */
  async list(scope: AccountScope, filter: GroupMembershipFilter, page: OffsetPage): Promise<GroupMembershipRecord[]> {
    const params: unknown[] = [];
    const where = filterSql(filter, params);
    params.push(page.perPage, (page.page - 1) * page.perPage);
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM group_memberships m WHERE ${where} ORDER BY m.id LIMIT $${params.length} OFFSET $${params.length + 1}`,
      params,
    );
    return rows.map(toRecord);
  }

  async count(scope: AccountScope, filter: GroupMembershipFilter): Promise<number> {
    const params: unknown[] = [];
    const [row] = await this.db.query<{ n: Int8 }>(scope, `SELECT count(*) AS n FROM group_memberships m WHERE ${filterSql(filter, params)}`, params);
    return Number(row.n);
  }

  /**
   * Stores the membership of a user and a group of the account; null when the pair
   * is a member already, or when either id is not of the account (nothing stored:
   * the statement reads both rows in the account, never another account's).
   */
  async insert(scope: AccountScope, row: { userId: bigint; groupId: bigint }): Promise<GroupMembershipRecord | null> {
    const [inserted] = await this.db.query<SqlRow>(
      scope,
      `INSERT INTO group_memberships AS m (account_id, user_id, group_id)
       SELECT $1, u.id, g.id FROM users u JOIN groups g ON g.account_id = $1 AND g.id = $3
        WHERE u.account_id = $1 AND u.id = $2
       ON CONFLICT (account_id, user_id, group_id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [String(row.userId), String(row.groupId)],
    );
    return inserted ? toRecord(inserted) : null;
  }

  async delete(scope: AccountScope, id: bigint): Promise<RemovedGroupMembership | null> {
    const [row] = await this.db.query<SqlRow & { user_name: string; group_name: string }>(
      scope,
      `DELETE FROM group_memberships m ${DELETE_RETURNING} AND m.id = $2 RETURNING ${REMOVED_COLUMNS}`,
      [String(id)],
    );
    return row ? toRemoved(row) : null;
  }

  /** Deletes every membership of a group (before the group goes) or of a user (deactivated, or no longer an agent), id ascending. */
  async deleteOf(scope: AccountScope, filter: { groupId: bigint } | { userId: bigint }): Promise<RemovedGroupMembership[]> {
    const params: unknown[] = [];
    const where = filterSql(filter, params);
    const rows = await this.db.query<SqlRow & { user_name: string; group_name: string }>(
      scope,
      `DELETE FROM group_memberships m ${DELETE_RETURNING} AND ${where} RETURNING ${REMOVED_COLUMNS}`,
      params,
    );
    return rows.map(toRemoved).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
