import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { keysetPageOf, type KeysetPage, type OffsetPage, type PageResult } from '../pagination';
import type { Role } from '../auth/viewer';

// The only module that reads or writes users outside the login (auth/login.repository.ts
// reads credentials). Every statement carries the row scope (usersVisibleTo:
// the account, and one user for non-admins), and every record goes through
// toRecord(), the one row mapper. Writes run on the caller's transaction (the
// service builds this repository over db.transaction's `sql`).

export interface UserRecord {
  id: bigint;
  accountId: bigint;
  name: string;
  email: string;
  role: Role;
  active: boolean;
  createdAt: Date;
  updatedAt: Date | null;
}

/** The users a viewer reaches: the account's, or one of them (usersVisibleTo). */
export interface UserScope extends AccountScope {
  id?: bigint;
}

/** A user with when their password was last set: sessions that began before it have ended. */
export interface SignedInUserRecord extends UserRecord {
  passwordChangedAt: Date;
}

/** Writable columns of an update (REST names in the audit log: name, email, role, active). */
export interface UserChanges {
  name?: string;
  email?: string;
  role?: Role;
  active?: boolean;
}

/**
 * What a user without a password stores: not a scrypt hash, so nothing verifies
 * against it (verifyPassword spends the dummy KDF and answers false).
 */
export const UNUSABLE_PASSWORD_HASH = '!no-password';

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; name: string; email: string; role: Role; active: boolean; created_at: Date; updated_at: Date | null;
}
const COLUMNS = 'u.id, u.account_id, u.name, u.email, u.role::text AS role, u.active, u.created_at, u.updated_at';

function toRecord(r: SqlRow): UserRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), name: r.name, email: r.email, role: r.role, active: r.active,
    createdAt: r.created_at, updatedAt: r.updated_at,
  };
}

/**
 * WHERE of a scope (alias u) after the account's (TenantSql binds $1), with an
 * optional role filter; appends its parameters, which are $2, $3, ….
 */
function scopeSql(scope: UserScope, params: unknown[], role?: Role): string {
  let where = 'u.account_id = $1';
  if (scope.id !== undefined) {
    params.push(String(scope.id));
    where += ` AND u.id = $${params.length + 1}`;
  }
  if (role !== undefined) {
    params.push(role);
    where += ` AND u.role = $${params.length + 1}::"UserRole"`;
  }
  return where;
}

/** Columns of an update, in a fixed order so that update has one statement text. */
const WRITABLE = [
  ['name', 'name', ''],
  ['email', 'email', ''],
  ['role', 'role', '::"UserRole"'],
  ['active', 'active', '::boolean'],
] as const;

export class UserRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: UserScope, id: bigint): Promise<UserRecord | null> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM users u WHERE ${where} AND u.id = $${params.length + 1}`, params);
    return row ? toRecord(row) : null;
  }

  /** A user with password_changed_at (the authorization pages' sessions); null outside the scope. */
  async findSignedIn(scope: UserScope, id: bigint): Promise<SignedInUserRecord | null> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const [row] = await this.db.query<SqlRow & { password_changed_at: Date }>(
      scope,
      `SELECT ${COLUMNS}, u.password_changed_at FROM users u WHERE ${where} AND u.id = $${params.length + 1}`,
      params,
    );
    return row ? { ...toRecord(row), passwordChangedAt: row.password_changed_at } : null;
  }

  /** Users by id within the scope, for DataLoader batching. */
  async findMany(scope: UserScope, ids: readonly bigint[]): Promise<UserRecord[]> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(ids.map(String));
    const rows = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM users u WHERE ${where} AND u.id = ANY($${params.length + 1}::bigint[])`, params);
    return rows.map(toRecord);
  }

  /** Keyset page, id ascending. */
  async listKeyset(scope: UserScope, role: Role | undefined, page: KeysetPage): Promise<PageResult<UserRecord>> {
    const params: unknown[] = [];
    let where = scopeSql(scope, params, role);
    const backward = page.before !== undefined;
    if (backward || page.after !== undefined) {
      params.push(String(backward ? page.before : page.after));
      where += ` AND u.id ${backward ? '<' : '>'} $${params.length + 1}`;
    }
    params.push(page.size + 1);
    const rows = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM users u WHERE ${where} ORDER BY u.id ${backward ? 'DESC' : 'ASC'} LIMIT $${params.length + 1}`, params);
    return keysetPageOf(rows, page, backward, toRecord);
  }

  async listOffset(scope: UserScope, role: Role | undefined, page: OffsetPage): Promise<UserRecord[]> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params, role);
    params.push(page.perPage, (page.page - 1) * page.perPage);
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM users u WHERE ${where} ORDER BY u.id LIMIT $${params.length} OFFSET $${params.length + 1}`,
      params,
    );
    return rows.map(toRecord);
  }

  async count(scope: UserScope, role?: Role): Promise<number> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params, role);
    const [row] = await this.db.query<{ n: Int8 }>(scope, `SELECT count(*) AS n FROM users u WHERE ${where}`, params);
    return Number(row.n);
  }

  /** Whether the database has any user at all, in any account (bootstrap: the first start). */
  async anyUser(): Promise<boolean> {
    const [row] = await this.db.crossTenant<{ found: boolean }>('operator', 'SELECT EXISTS (SELECT 1 FROM users) AS found');
    return row.found;
  }

  /** The users with this email (case-insensitive) in every account, account id ascending (the operator's password reset names a user by email). */
  async withEmailInAnyAccount(email: string): Promise<UserRecord[]> {
    const rows = await this.db.crossTenant<SqlRow>('operator', `SELECT ${COLUMNS} FROM users u WHERE u.email_key = lower($1) ORDER BY u.account_id, u.id`, [email]);
    return rows.map(toRecord);
  }

  /** Stores a user; null when the account already has a user with that email (case-insensitive). */
  async insert(scope: AccountScope, row: { name: string; email: string; role: Role; passwordHash: string }): Promise<UserRecord | null> {
    const [inserted] = await this.db.query<SqlRow>(
      scope,
      `INSERT INTO users AS u (account_id, name, email, email_key, role, password_hash)
       VALUES ($1, $2, $3, lower($3), $4::"UserRole", $5)
       ON CONFLICT (account_id, email_key) DO NOTHING
       RETURNING ${COLUMNS}`,
      [row.name, row.email, row.role, row.passwordHash],
    );
    return inserted ? toRecord(inserted) : null;
  }

  /**
   * The user with their password hash, locked until the transaction ends (unless
   * `forUpdate` is false: a plain read); null outside the scope.
   */
  async lock(scope: UserScope, id: bigint, forUpdate = true): Promise<{ user: UserRecord; passwordHash: string } | null> {
    const params: unknown[] = [];
    const where = scopeSql(scope, params);
    params.push(String(id));
    const [row] = await this.db.query<SqlRow & { password_hash: string }>(
      scope,
      `SELECT ${COLUMNS}, u.password_hash FROM users u WHERE ${where} AND u.id = $${params.length + 1}${forUpdate ? ' FOR UPDATE' : ''}`,
      params,
    );
    return row ? { user: toRecord(row), passwordHash: row.password_hash } : null;
  }

  /**
   * The active admins of the account, locked until the transaction ends: two
   * transactions demoting the last two admins at once serialise here, and the
   * second sees one admin left.
   */
  async lockActiveAdmins(scope: AccountScope): Promise<bigint[]> {
    const rows = await this.db.query<{ id: Int8 }>(
      scope,
      "SELECT u.id FROM users u WHERE u.account_id = $1 AND u.role = 'admin' AND u.active ORDER BY u.id FOR UPDATE",
    );
    return rows.map((r) => BigInt(r.id));
  }

  /** Whether another user of the account holds this email (case-insensitive). */
  async emailTaken(scope: AccountScope, email: string, exceptId: bigint): Promise<boolean> {
    const [row] = await this.db.query<{ taken: boolean }>(
      scope,
      'SELECT EXISTS (SELECT 1 FROM users u WHERE u.account_id = $1 AND u.email_key = lower($2) AND u.id <> $3) AS taken',
      [email, String(exceptId)],
    );
    return row.taken;
  }

  /** Sets the given fields and updated_at; one statement text for any subset. */
  async update(scope: AccountScope, id: bigint, changes: UserChanges): Promise<UserRecord | null> {
    const params: unknown[] = [String(id)];
    const sets = WRITABLE.map(([key, column, cast]) => {
      const given = changes[key] !== undefined;
      params.push(given, given ? changes[key] : null);
      return `${column} = CASE WHEN $${params.length}::boolean THEN $${params.length + 1}${cast} ELSE u.${column} END`;
    });
    const [row] = await this.db.query<SqlRow>(
      scope,
      `UPDATE users u SET ${sets.join(', ')}, email_key = lower(CASE WHEN $5::boolean THEN $6 ELSE u.email END), updated_at = now()
        WHERE u.account_id = $1 AND u.id = $2
       RETURNING ${COLUMNS}`,
      params,
    );
    return row ? toRecord(row) : null;
  }

  /** A new password hash; password_changed_at and updated_at are now. */
  async setPasswordHash(scope: AccountScope, id: bigint, passwordHash: string): Promise<UserRecord | null> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      `UPDATE users u SET password_hash = $3, password_changed_at = now(), updated_at = now()
        WHERE u.account_id = $1 AND u.id = $2
       RETURNING ${COLUMNS}`,
      [String(id), passwordHash],
    );
    return row ? toRecord(row) : null;
  }
}
