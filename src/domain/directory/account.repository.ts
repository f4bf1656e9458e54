import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';

// The only module that reads or writes accounts (the login and the Bearer lookup
// read subdomains inside their own statements). An account's scope is the
// account itself: every statement names its id, but list() and insert(), which
// the operator uses from the CLI, before any account is known. Every record goes
// through toRecord(), the one row mapper.

/** subdomain: the account's host, {subdomain}.<PUBLIC_URL's host> (src/http/request-context.ts) */
export interface AccountRecord {
  id: bigint;
  name: string;
  subdomain: string;
  omnichannelRouting: boolean;
  /** the callback lifecycle's settings, in seconds (attempts: a count) */
  callbackOfferTimeout: number;
  callbackRetryDelay: number;
  callbackMaxAttempts: number;
  wrapUpTime: number;
  /** whether Basic `{email}/token:{api_token}` sign-ins are accepted (docs/api.md, "API tokens") */
  apiTokenAccess: boolean;
  createdAt: Date;
  updatedAt: Date | null;
}

/** The account's settings (docs/api.md, "Account settings"). */
export interface AccountSettingsChanges {
  omnichannelRouting?: boolean;
  callbackOfferTimeout?: number;
  callbackRetryDelay?: number;
  callbackMaxAttempts?: number;
  wrapUpTime?: number;
  apiTokenAccess?: boolean;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; name: string; subdomain: string; omnichannel_routing: boolean; callback_offer_timeout: number; callback_retry_delay: number;
  callback_max_attempts: number; wrap_up_time: number; api_token_access: boolean; created_at: Date; updated_at: Date | null;
}
const COLUMNS = 'a.id, a.name, a.subdomain, a.omnichannel_routing, a.callback_offer_timeout, a.callback_retry_delay, a.callback_max_attempts, a.wrap_up_time, a.api_token_access, a.created_at, a.updated_at';

function toRecord(r: SqlRow): AccountRecord {
  return {
    id: BigInt(r.id), name: r.name, subdomain: r.subdomain, omnichannelRouting: r.omnichannel_routing, callbackOfferTimeout: r.callback_offer_timeout,
    callbackRetryDelay: r.callback_retry_delay, callbackMaxAttempts: r.callback_max_attempts, wrapUpTime: r.wrap_up_time, apiTokenAccess: r.api_token_access, createdAt: r.created_at, updatedAt: r.updated_at,
  };
}

/** The integer settings: key → column (fixed text of updateSettings). */
const INTEGER_SETTINGS = [
  ['callbackOfferTimeout', 'callback_offer_timeout'],
  ['callbackRetryDelay', 'callback_retry_delay'],
  ['callbackMaxAttempts', 'callback_max_attempts'],
  ['wrapUpTime', 'wrap_up_time'],
] as const;

export class AccountRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: AccountScope, lock = false): Promise<AccountRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM accounts a WHERE a.id = $1${lock ? ' FOR UPDATE' : ''}`);
    return row ? toRecord(row) : null;
  }

  async findByName(name: string): Promise<AccountRecord | null> {
    const [row] = await this.db.crossTenant<SqlRow>('operator', `SELECT ${COLUMNS} FROM accounts a WHERE a.name = $1`, [name]);
    return row ? toRecord(row) : null;
  }

  /** Every account, id ascending (the operator's list). */
  async list(): Promise<AccountRecord[]> {
    const rows = await this.db.crossTenant<SqlRow>('operator', `SELECT ${COLUMNS} FROM accounts a ORDER BY a.id`);
    return rows.map(toRecord);
  }

  /**
   * Stores an account; without a subdomain ('') the database derives one from the
   * name. null when the name or the subdomain is taken.
   */
  async insert(row: { name: string; subdomain?: string }): Promise<AccountRecord | null> {
    const [inserted] = await this.db.crossTenant<SqlRow>(
      'operator',
      `INSERT INTO accounts AS a (name, subdomain) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [row.name, row.subdomain ?? ''],
    );
    return inserted ? toRecord(inserted) : null;
  }

  /** Sets the given settings and updated_at. */
  async updateSettings(scope: AccountScope, changes: AccountSettingsChanges): Promise<AccountRecord | null> {
    const given = changes.omnichannelRouting !== undefined;
    const params: unknown[] = [given, given ? changes.omnichannelRouting : null];
    const sets = INTEGER_SETTINGS.map(([key, column]) => {
      params.push(changes[key] !== undefined, changes[key] ?? null);
      return `${column} = CASE WHEN $${params.length}::boolean THEN $${params.length + 1}::int ELSE a.${column} END`;
    });
    params.push(changes.apiTokenAccess !== undefined, changes.apiTokenAccess ?? null);
    sets.push(`api_token_access = CASE WHEN $${params.length}::boolean THEN $${params.length + 1}::boolean ELSE a.api_token_access END`);
    const [row] = await this.db.query<SqlRow>(
      scope,
      `UPDATE accounts a SET omnichannel_routing = CASE WHEN $2::boolean THEN $3::boolean ELSE a.omnichannel_routing END, ${sets.join(', ')}, updated_at = now()
        WHERE a.id = $1
       RETURNING ${COLUMNS}`,
      params,
    );
    return row ? toRecord(row) : null;
  }
}
