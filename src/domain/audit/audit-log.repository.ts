import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { keysetPageOf, type KeysetPage, type PageResult } from '../pagination';
import type { RequestOrigin, Viewer } from '../auth/viewer';
import type { AuditSourceType } from './audit-source-types';
import { eventRows, recordedEventsCtes, type EventEntry } from '../events/event-log.repository';

// The audit log (Zendesk's audit_logs): one row per change to clients, tokens,
// users, groups, voice phone numbers and account settings, written by
// recordAudit() with the SQL function of the transaction that makes the change,
// so that the change and its record commit or roll back together. Names of the
// changed fields only, never their values (a secret never reaches this table).
// A change that emits an event (docs/api.md, "Events") writes it here too, in the
// same statement: the entry's `event`, or, for the changes made in one statement,
// eventCtes (src/domain/events/event-log.repository.ts) beside auditCte.

export type AuditAction = 'create' | 'update' | 'destroy';
export type { AuditSourceType } from './audit-source-types';

/** Who made a change, and how it arrived. */
export interface AuditActor {
  accountId: bigint;
  /** null: the system (CLI, bootstrap) */
  actorId: bigint | null;
  actorName: string;
  origin: RequestOrigin;
}

export interface AuditEntry {
  action: AuditAction;
  sourceType: AuditSourceType;
  sourceId: bigint;
  /** what the target is called (a user's name, a client's name, a token's prefix…) */
  sourceLabel: string;
  /** names of the fields that changed (never values) */
  changedFields?: readonly string[];
  /** one sentence, e.g. "Revoked", "Issued by the refresh_token grant" */
  description: string;
  /** the event this change emits, if any (written with the record, in its statement) */
  event?: EventEntry;
}

export interface AuditLogRecord extends AuditEntry {
  id: bigint;
  accountId: bigint;
  actorId: bigint | null;
  actorName: string;
  changedFields: string[];
  via: RequestOrigin['via'];
  requestId: string | null;
  ipAddress: string | null;
  createdAt: Date;
}

/**
 * The actor of a request. An impersonating admin is the actor (the change is theirs),
 * and the description says on whose behalf.
 */
export function actorOf(viewer: Viewer): AuditActor {
  const origin: RequestOrigin = viewer.origin ?? { via: 'api' };
  if (viewer.impersonatorId !== undefined) {
    return { accountId: viewer.accountId, actorId: viewer.impersonatorId, actorName: viewer.impersonatorName ?? '', origin };
  }
  return { accountId: viewer.accountId, actorId: viewer.userId, actorName: viewer.name, origin };
}

/** A description, with on whose behalf an impersonating admin made the change (actorOf makes the admin the actor). */
export function describedFor(viewer: Viewer, description: string): string {
  return viewer.impersonatorId === undefined ? description : `${description} (on behalf of ${viewer.name}, user ${viewer.userId})`;
}

/** Changes made by the service itself or by an operator on the command line. */
export function systemActor(accountId: bigint, origin: RequestOrigin = { via: 'cli' }): AuditActor {
  return { accountId, actorId: null, actorName: origin.via === 'cli' ? 'CLI' : 'System', origin };
}

const INSERT_INTO =
  'INSERT INTO audit_logs (account_id, actor_id, actor_name, action, source_type, source_id, source_label, changed_fields, change_description, via, request_id, ip_address) ';
const INSERT =
  INSERT_INTO +
  'SELECT $1, $2, $3, e.action, e.source_type, e.source_id, e.source_label, ' +
  "COALESCE((SELECT array_agg(f) FROM jsonb_array_elements_text(e.changed_fields) AS f), '{}'), e.change_description, $4, $5, $6 " +
  'FROM jsonb_to_recordset($7::jsonb) AS e(action text, source_type text, source_id bigint, source_label text, changed_fields jsonb, change_description text)';

/**
 * Writes the records of one change, in one statement, on the transaction's
 * connection `sql` (tenantTransaction's argument): never on a separate connection.
 * The records belong to the actor's account.
 */
export async function recordAudit(sql: TenantSql, actor: AuditActor, entries: AuditEntry | readonly AuditEntry[]): Promise<void> {
  const list = Array.isArray(entries) ? entries : [entries as AuditEntry];
  if (list.length === 0) return;
  const rows = list.map((e) => ({
    action: e.action,
    source_type: e.sourceType,
    source_id: String(e.sourceId),
    source_label: e.sourceLabel.slice(0, 255),
    changed_fields: [...(e.changedFields ?? [])],
    change_description: e.description,
  }));
  const params = [
    actor.actorId === null ? null : String(actor.actorId),
    actor.actorName,
    actor.origin.via,
    actor.origin.requestId ?? null,
    actor.origin.ipAddress ?? null,
    JSON.stringify(rows),
  ];
  const events = list.flatMap((e) => (e.event ? [e.event] : []));
  if (events.length === 0) {
    await sql.query(actor, INSERT, params);
    return;
  }
  await sql.query(actor, `WITH audit AS (${INSERT}), ${recordedEventsCtes(8)} SELECT 1`, [...params, eventRows(events)]);
}

/**
 * SQL expressions, over the rows a change returned, for one record per row
 * (auditCte). Expressions are fixed text with $n parameters, never values.
 */
export interface AuditRowSql {
  accountId: string;
  actorId: string;
  actorName: string;
  sourceId: string;
  sourceLabel: string;
  description: string;
}

/**
 * recordAudit's insert as a data-modifying CTE of the change's own statement,
 * for the changes made in one statement (tokens: created, issued by a grant,
 * revoked): one statement is one transaction, so the change and its record
 * commit or roll back together, and the hot paths keep their one round trip (a
 * separate INSERT would need BEGIN, the change, the insert and COMMIT: four).
 * One record per row of `from` (a CTE of the statement holding what the change
 * returned); the origin is parameters $o, $o+1, $o+2 (originParams).
 */
export function auditCte(from: string, action: AuditAction, sourceType: AuditSourceType, row: AuditRowSql, o: number): string {
  return (
    INSERT_INTO +
    `SELECT ${row.accountId}, ${row.actorId}, ${row.actorName}, '${action}', '${sourceType}', ${row.sourceId}, left(${row.sourceLabel}, 255), '{}', ${row.description}, ` +
    `$${o}::text, $${o + 1}::text, $${o + 2}::text FROM ${from}`
  );
}

/** The parameters of auditCte's origin ($o, $o+1, $o+2). */
export function originParams(origin: RequestOrigin): [string, string | null, string | null] {
  return [origin.via, origin.requestId ?? null, origin.ipAddress ?? null];
}

// ------------------------------------------------------------------ reading

export interface AuditLogFilter {
  sourceType?: AuditSourceType;
  actorId?: bigint;
  action?: AuditAction;
  /** inclusive bounds of created_at */
  createdFrom?: Date;
  createdTo?: Date;
}

/** newest first (id descending, Zendesk's default `-created_at`) or oldest first */
export type AuditLogOrder = 'desc' | 'asc';

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; actor_id: Int8 | null; actor_name: string; action: AuditAction; source_type: AuditSourceType; source_id: Int8;
  source_label: string; changed_fields: string[] | null; change_description: string; via: RequestOrigin['via']; request_id: string | null;
  ip_address: string | null; created_at: Date;
}
const COLUMNS =
  'l.id, l.account_id, l.actor_id, l.actor_name, l.action, l.source_type, l.source_id, l.source_label, l.changed_fields, ' +
  'l.change_description, l.via, l.request_id, l.ip_address, l.created_at';

function toRecord(r: SqlRow): AuditLogRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), actorId: r.actor_id === null ? null : BigInt(r.actor_id), actorName: r.actor_name,
    action: r.action, sourceType: r.source_type, sourceId: BigInt(r.source_id), sourceLabel: r.source_label, changedFields: r.changed_fields ?? [],
    description: r.change_description, via: r.via, requestId: r.request_id, ipAddress: r.ip_address, createdAt: r.created_at,
  };
}

/**
 * WHERE of an account's records (alias l) with the filter; appends its
 * parameters, which are $2, $3, … (TenantSql binds the account, $1). Every statement of the reader is scoped to the viewer's account
 * (the policy's row scope), `find` by its own two-column WHERE. The text varies only with which of source type,
 * actor and time range are given (the indexes (account_id, source_type, id),
 * (account_id, actor_id, id) and (account_id, created_at) serve them), so the
 * reader prepares a handful of statement texts, not one per combination of values.
 */
function scopeSql(filter: AuditLogFilter, params: unknown[]): string {
  const p = (value: unknown) => `$${params.push(value) + 1}`;
  let where = 'l.account_id = $1';
  if (filter.sourceType !== undefined) where += ` AND l.source_type = ${p(filter.sourceType)}`;
  if (filter.actorId !== undefined) where += ` AND l.actor_id = ${p(String(filter.actorId))}`;
  where += ` AND (${p(filter.action ?? null)}::text IS NULL OR l.action = $${params.length + 1}::text)`;
  if (filter.createdFrom !== undefined || filter.createdTo !== undefined) {
    where += ` AND l.created_at BETWEEN COALESCE(${p(filter.createdFrom ?? null)}::timestamptz, '-infinity') AND COALESCE(${p(filter.createdTo ?? null)}::timestamptz, 'infinity')`;
  }
  return where;
}

const MAX_ID = 9223372036854775807n;

/** Reads the audit log (records are written only by recordAudit and auditCte above). */
export class AuditLogRepository {
  constructor(private readonly db: TenantSql) {}

  async find(scope: AccountScope, id: bigint): Promise<AuditLogRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM audit_logs l WHERE l.account_id = $1 AND l.id = $2`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /**
   * A keyset page in `order` (ids grow with creation time): forward after a
   * cursor, or backward before one. A page deep in the log costs what the first does.
   */
  async listKeyset(scope: AccountScope, filter: AuditLogFilter, order: AuditLogOrder, page: KeysetPage & { backward: boolean }): Promise<PageResult<AuditLogRecord>> {
    const params: unknown[] = [];
    const where = scopeSql(filter, params);
    const { backward } = page;
    // the direction the statement reads in: the page's order, reversed when paging backward
    const ascending = (order === 'asc') !== backward;
    // from the cursor, or from the start of that direction (one statement text either way)
    const bound = (backward ? page.before : page.after) ?? (ascending ? 0n : MAX_ID);
    params.push(String(bound), page.size + 1);
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM audit_logs l WHERE ${where} AND l.id ${ascending ? '>' : '<'} $${params.length} ORDER BY l.id ${ascending ? 'ASC' : 'DESC'} LIMIT $${params.length + 1}`,
      params,
    );
    return keysetPageOf(rows, page, backward, toRecord);
  }

  async count(scope: AccountScope, filter: AuditLogFilter): Promise<number> {
    const params: unknown[] = [];
    const where = scopeSql(filter, params);
    const [row] = await this.db.query<{ n: Int8 }>(scope, `SELECT count(*) AS n FROM audit_logs l WHERE ${where}`, params);
    return Number(row.n);
  }
}
