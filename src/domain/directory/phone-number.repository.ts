import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import type { OffsetPage } from '../pagination';

// The only module that reads or writes voice_phone_numbers (callback_request_lookups,
// a database function, checks ids and deleted_at on its own). Every statement is
// scoped to the account and sees live numbers only (deleted_at IS NULL), but the
// insert, which brings a deleted number back; every record goes through
// toRecord(), the one row mapper. Writes run on the caller's transaction.

export interface PhoneNumberRecord {
  id: bigint;
  accountId: bigint;
  /** E.164 */
  number: string;
  nickname: string | null;
  callbackEnabled: boolean;
  voiceEnabled: boolean;
  smsEnabled: boolean;
  mmsEnabled: boolean;
  createdAt: Date;
  updatedAt: Date | null;
}

/** Writable fields (the number is read-only once created). */
export interface PhoneNumberChanges {
  nickname?: string | null;
  callbackEnabled?: boolean;
  voiceEnabled?: boolean;
  smsEnabled?: boolean;
  mmsEnabled?: boolean;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; number: string; nickname: string | null; callback_enabled: boolean;
  voice_enabled: boolean; sms_enabled: boolean; mms_enabled: boolean; created_at: Date; updated_at: Date | null;
}
const COLUMNS = 'p.id, p.account_id, p.number, p.nickname, p.callback_enabled, p.voice_enabled, p.sms_enabled, p.mms_enabled, p.created_at, p.updated_at';

function toRecord(r: SqlRow): PhoneNumberRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), number: r.number, nickname: r.nickname, callbackEnabled: r.callback_enabled,
    voiceEnabled: r.voice_enabled, smsEnabled: r.sms_enabled, mmsEnabled: r.mms_enabled, createdAt: r.created_at, updatedAt: r.updated_at,
  };
}

const WRITABLE = [
  ['nickname', 'nickname', '::text'],
  ['callbackEnabled', 'callback_enabled', '::boolean'],
  ['voiceEnabled', 'voice_enabled', '::boolean'],
  ['smsEnabled', 'sms_enabled', '::boolean'],
  ['mmsEnabled', 'mms_enabled', '::boolean'],
] as const;

export class PhoneNumberRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: AccountScope, id: bigint, lock = false): Promise<PhoneNumberRecord | null> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM voice_phone_numbers p WHERE p.account_id = $1 AND p.id = $2 AND p.deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [String(id)],
    );
    return row ? toRecord(row) : null;
  }

  /** Live numbers, id ascending. */
  async list(scope: AccountScope, page: OffsetPage): Promise<PhoneNumberRecord[]> {
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM voice_phone_numbers p WHERE p.account_id = $1 AND p.deleted_at IS NULL ORDER BY p.id LIMIT $2 OFFSET $3`,
      [page.perPage, (page.page - 1) * page.perPage],
    );
    return rows.map(toRecord);
  }

  async count(scope: AccountScope): Promise<number> {
    const [row] = await this.db.query<{ n: Int8 }>(scope, 'SELECT count(*) AS n FROM voice_phone_numbers p WHERE p.account_id = $1 AND p.deleted_at IS NULL');
    return Number(row.n);
  }

  /**
   * Stores a number, or brings a deleted one back (same id, its callback
   * requests' history kept) with the given attributes. null when the account
   * has that number live already.
   */
  async insertOrRevive(scope: AccountScope, row: { number: string } & Required<PhoneNumberChanges>): Promise<{ record: PhoneNumberRecord; revived: boolean } | null> {
    const [inserted] = await this.db.query<SqlRow & { revived: boolean }>(
      scope,
      `INSERT INTO voice_phone_numbers AS p (account_id, number, nickname, callback_enabled, voice_enabled, sms_enabled, mms_enabled)
       VALUES ($1, $2, $3::text, $4, $5, $6, $7)
       ON CONFLICT (account_id, number) DO UPDATE
          SET nickname = EXCLUDED.nickname, callback_enabled = EXCLUDED.callback_enabled, voice_enabled = EXCLUDED.voice_enabled,
              sms_enabled = EXCLUDED.sms_enabled, mms_enabled = EXCLUDED.mms_enabled, deleted_at = NULL, updated_at = now()
        WHERE p.deleted_at IS NOT NULL
       RETURNING ${COLUMNS}, p.xmax::text <> '0' AS revived`,
      [row.number, row.nickname, row.callbackEnabled, row.voiceEnabled, row.smsEnabled, row.mmsEnabled],
    );
    return inserted ? { record: toRecord(inserted), revived: inserted.revived } : null;
  }

  /** Sets the given fields and updated_at on a live number; one statement text for any subset. */
  async update(scope: AccountScope, id: bigint, changes: PhoneNumberChanges): Promise<PhoneNumberRecord | null> {
    const params: unknown[] = [String(id)];
    const sets = WRITABLE.map(([key, column, cast]) => {
      const given = changes[key] !== undefined;
      params.push(given, given ? changes[key] : null);
      return `${column} = CASE WHEN $${params.length}::boolean THEN $${params.length + 1}${cast} ELSE p.${column} END`;
    });
    const [row] = await this.db.query<SqlRow>(
      scope,
      `UPDATE voice_phone_numbers p SET ${sets.join(', ')}, updated_at = now()
        WHERE p.account_id = $1 AND p.id = $2 AND p.deleted_at IS NULL
       RETURNING ${COLUMNS}`,
      params,
    );
    return row ? toRecord(row) : null;
  }

  /**
   * Soft delete: the number leaves lists, show and callback creation. null when no
   * live number. The row is locked FOR UPDATE (a plain UPDATE of non-key columns
   * would not conflict with the key-share lock create_callback_request takes on it):
   * a callback request being stored for the number finishes first (and is then
   * cancelled by the caller), or waits and finds the number deleted.
   */
  async softDelete(scope: AccountScope, id: bigint): Promise<PhoneNumberRecord | null> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      `WITH live AS (SELECT id FROM voice_phone_numbers WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE)
       UPDATE voice_phone_numbers p SET deleted_at = now(), updated_at = now()
         FROM live WHERE p.id = live.id
       RETURNING ${COLUMNS}`,
      [String(id)],
    );
    return row ? toRecord(row) : null;
  }
}
