import type { TenantSql } from '../../db/tenant-sql';
import { ADVISORY_LOCKS } from '../../db/advisory-locks';
import type { AccountScope } from '../authorization';
import { keysetPageOf, type KeysetPage, type PageResult } from '../pagination';
import type { HttpMethod, RequestFormat, WebhookFields, WebhookStatus } from './webhook.validation';

// The only module that reads or writes webhooks. Every statement is scoped to the
// account; every record goes through toRecord(), the one row mapper. The signing
// secret is read by readSecret() only, sealed (signing-secret.ts): never in a record.

export interface WebhookRecord {
  id: bigint;
  accountId: bigint;
  name: string;
  description: string | null;
  endpoint: string;
  httpMethod: HttpMethod;
  requestFormat: RequestFormat;
  status: WebhookStatus;
  subscriptions: string[];
  createdBy: bigint | null;
  updatedBy: bigint | null;
  createdAt: Date;
  updatedAt: Date | null;
}

/** What a list shows: the webhooks of one status, and those whose name contains a text (case-insensitive). */
export interface WebhookFilter {
  status?: WebhookStatus;
  nameContains?: string;
}

/** The filter's WHERE (alias w) after the account's; its parameters are appended (they are $2, $3, …). */
function filterSql(filter: WebhookFilter, params: unknown[]): string {
  let where = 'w.account_id = $1';
  if (filter.status !== undefined) {
    params.push(filter.status);
    where += ` AND w.status = $${params.length + 1}`;
  }
  if (filter.nameContains) {
    params.push(`%${filter.nameContains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    where += ` AND w.name ILIKE $${params.length + 1}`;
  }
  return where;
}

/** Every field of a new webhook, and its sealed secret. */
export type NewWebhook = Required<WebhookFields> & { sealedSecret: string };

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; name: string; description: string | null; endpoint: string; http_method: HttpMethod; request_format: RequestFormat;
  status: WebhookStatus; subscriptions: string[] | null; created_by: Int8 | null; updated_by: Int8 | null; created_at: Date; updated_at: Date | null;
}
const COLUMNS = 'w.id, w.account_id, w.name, w.description, w.endpoint, w.http_method, w.request_format, w.status, w.subscriptions, w.created_by, w.updated_by, w.created_at, w.updated_at';

const big = (v: Int8 | null) => (v === null ? null : BigInt(v));

function toRecord(r: SqlRow): WebhookRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), name: r.name, description: r.description, endpoint: r.endpoint, httpMethod: r.http_method,
    requestFormat: r.request_format, status: r.status, subscriptions: r.subscriptions ?? [], createdBy: big(r.created_by), updatedBy: big(r.updated_by),
    createdAt: r.created_at, updatedAt: r.updated_at,
  };
}

/** Writable columns, in a fixed order so that update has one statement text. */
const WRITABLE = [
  ['name', 'name', '::text'],
  ['description', 'description', '::text'],
  ['endpoint', 'endpoint', '::text'],
  ['httpMethod', 'http_method', '::text'],
  ['requestFormat', 'request_format', '::text'],
  ['status', 'status', '::text'],
  ['subscriptions', 'subscriptions', '::text[]'],
] as const;

export class WebhookRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: AccountScope, id: bigint): Promise<WebhookRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM webhooks w WHERE w.account_id = $1 AND w.id = $2`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /** id ascending, a keyset page forward (after) or backward (before), of the filter's webhooks. */
  async listKeyset(scope: AccountScope, filter: WebhookFilter, page: KeysetPage): Promise<PageResult<WebhookRecord>> {
    const backward = page.before !== undefined;
    const params: unknown[] = [];
    let where = filterSql(filter, params);
    if (backward || page.after !== undefined) {
      params.push(String(backward ? page.before : page.after));
      where += ` AND w.id ${backward ? '<' : '>'} $${params.length + 1}`;
    }
    params.push(page.size + 1);
    const rows = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM webhooks w WHERE ${where} ORDER BY w.id ${backward ? 'DESC' : 'ASC'} LIMIT $${params.length + 1}`, params);
    return keysetPageOf(rows, page, backward, toRecord);
  }

  async count(scope: AccountScope, filter: WebhookFilter = {}): Promise<number> {
    const params: unknown[] = [];
    const [row] = await this.db.query<{ n: Int8 }>(scope, `SELECT count(*) AS n FROM webhooks w WHERE ${filterSql(filter, params)}`, params);
    return Number(row.n);
  }

  /**
   * Stores a webhook unless the account has `max` already: null then. In the caller's
   * transaction, the account's creations are serialised by a transaction-scoped lock
   * taken first, so that the count of the next statement sees every webhook committed
   * before (concurrent creations cannot pass the limit together).
   */
  async insert(scope: AccountScope & { createdBy: bigint | null }, row: NewWebhook, max: number): Promise<WebhookRecord | null> {
    await this.db.query(scope, `SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.webhookLimit}, hashtext($1::text))`);
    const [inserted] = await this.db.query<SqlRow>(
      scope,
      `INSERT INTO webhooks AS w (account_id, name, description, endpoint, http_method, request_format, status, subscriptions, signing_secret, created_by)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8::text[], $9, $10
        WHERE (SELECT count(*) FROM webhooks c WHERE c.account_id = $1) < $11
       RETURNING ${COLUMNS}`,
      [row.name, row.description, row.endpoint, row.httpMethod, row.requestFormat, row.status, row.subscriptions, row.sealedSecret, scope.createdBy === null ? null : String(scope.createdBy), max],
    );
    return inserted ? toRecord(inserted) : null;
  }

  /**
   * Sets the given fields (updated_at, updated_by) and returns the webhook with the
   * names of the fields whose value changed (REST's names, for the audit log); null
   * when the scope has no such webhook. One statement text for any subset.
   */
  async update(scope: AccountScope & { updatedBy: bigint | null }, id: bigint, fields: WebhookFields): Promise<{ webhook: WebhookRecord; changed: string[] } | null> {
    const params: unknown[] = [String(id), scope.updatedBy === null ? null : String(scope.updatedBy)];
    const sets = WRITABLE.map(([key, column, cast]) => {
      const given = fields[key] !== undefined;
      params.push(given, given ? fields[key] : null);
      return `${column} = CASE WHEN $${params.length}::boolean THEN $${params.length + 1}${cast} ELSE w.${column} END`;
    });
    const changed = WRITABLE.map(([, column]) => `CASE WHEN w.${column} IS DISTINCT FROM old.${column} THEN '${column}' END`).join(', ');
    const [row] = await this.db.query<SqlRow & { changed: string[] }>(
      scope,
      `WITH old AS (SELECT * FROM webhooks WHERE account_id = $1 AND id = $2 FOR UPDATE)
       UPDATE webhooks w SET ${sets.join(', ')}, updated_at = now(), updated_by = $3 FROM old WHERE w.id = old.id
       RETURNING ${COLUMNS}, array_remove(ARRAY[${changed}]::text[], NULL) AS changed`,
      params,
    );
    return row ? { webhook: toRecord(row), changed: row.changed } : null;
  }

  async delete(scope: AccountScope, id: bigint): Promise<WebhookRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `DELETE FROM webhooks w WHERE w.account_id = $1 AND w.id = $2 RETURNING ${COLUMNS}`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /** The sealed signing secret of a webhook; null when the scope has no such webhook. */
  async readSecret(scope: AccountScope, id: bigint): Promise<string | null> {
    const [row] = await this.db.query<{ signing_secret: string }>(scope, 'SELECT w.signing_secret FROM webhooks w WHERE w.account_id = $1 AND w.id = $2', [String(id)]);
    return row?.signing_secret ?? null;
  }

  /** Replaces the sealed signing secret (the old one stops at once); null when the scope has no such webhook. */
  async replaceSecret(scope: AccountScope & { updatedBy: bigint | null }, id: bigint, sealedSecret: string): Promise<WebhookRecord | null> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      `UPDATE webhooks w SET signing_secret = $3, updated_at = now(), updated_by = $4 WHERE w.account_id = $1 AND w.id = $2 RETURNING ${COLUMNS}`,
      [String(id), sealedSecret, scope.updatedBy === null ? null : String(scope.updatedBy)],
    );
    return row ? toRecord(row) : null;
  }
}
