import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { eventType, type EventName } from './event-types';

// The events table (docs/api.md, "Events"): one row per change, in Zendesk's
// envelope. Rows are written only by the code that writes the change's audit
// record, in the same statement (recordAudit, and eventCtes beside auditCte for
// the changes made in one statement), so a change and its event commit or roll
// back together. Each event also sends, in that statement, a NOTIFY on channel
// `events` with its id (delivered at commit, and only then: the live feed) when a
// process has live subscribers of its account (live_event_listeners), and
// writes its `event.published` job (the webhooks' fan-out) when the account has an
// active webhook subscribed to its type. An account without one pays no job: no
// row, no wake-up of the engines, no fan-out statement (bench scenario 10 doubled).

/** Zendesk's event schema version (its envelope's `zendesk_event_version`). */
export const ZENDESK_EVENT_VERSION = '2022-06-20';
/** The job that publishes an event (payload {event_id}). */
export const EVENT_PUBLISHED_JOB = 'event.published';
/** The NOTIFY channel of new events (payload: the event's id). */
export const EVENTS_CHANNEL = 'events';

/** An event of a change recorded with recordAudit. */
export interface EventEntry {
  name: EventName;
  /** the subject without `zen:`, e.g. `oauth_client:7` */
  subject: string;
  /** the resource as the REST API shows it (event-details.ts): never a secret */
  detail: Record<string, unknown>;
  /** what changed (previous and current values), or {} */
  event?: Record<string, unknown>;
}

/** Zendesk's event envelope. */
export interface EventEnvelope {
  type: string;
  account_id: number;
  id: string;
  time: string;
  zendesk_event_version: string;
  subject: string;
  detail: Record<string, unknown>;
  event: Record<string, unknown>;
}

const INSERT_INTO = 'INSERT INTO events (account_id, type, subject, detail, event, zendesk_event_version) ';

/**
 * What the INSERT INTO events of every statement returns: the new row's id, account and
 * type; and its NOTIFY sent (once per row) when a process has live subscribers of the
 * account (live_event_listeners). PostgreSQL serializes the commits of transactions that
 * notify: a service nobody watches live pays none (bench scenario 10: 1.3 to 1.6 ×).
 */
const RETURNING =
  `RETURNING id, account_id, type, CASE WHEN EXISTS (SELECT 1 FROM live_event_listeners l WHERE l.account_id = events.account_id AND l.expires_at > now()) ` +
  `THEN pg_notify('${EVENTS_CHANNEL}', id::text) END AS notified`;

/**
 * The fan-out job of each row of CTE `ev` (RETURNING's columns) that an active
 * webhook of its account subscribes to (the fan-out's own rule, webhook-invocation.repository.ts):
 * the tail of every statement that writes events. PostgreSQL folds the repeated
 * `jobs` wake-up into one.
 */
const publishCte = (ev: string) =>
  `INSERT INTO jobs (account_id, kind, payload) SELECT ${ev}.account_id, '${EVENT_PUBLISHED_JOB}', jsonb_build_object('event_id', ${ev}.id) FROM ${ev} ` +
  `WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = ${ev}.account_id AND w.status = 'active' AND ${ev}.type = ANY(w.subscriptions)) ` +
  `RETURNING pg_notify('jobs', '') AS notified`;

/**
 * recordAudit's events: CTEs `events_written` and `events_published` over the
 * entries in parameter `$p` (a JSON array of {type, subject, detail, event}),
 * in the account $1.
 */
export function recordedEventsCtes(p: number): string {
  return (
    `events_written AS (${INSERT_INTO}SELECT $1, e.type, e.subject, e.detail, e.event, '${ZENDESK_EVENT_VERSION}' ` +
    `FROM jsonb_to_recordset($${p}::jsonb) AS e(type text, subject text, detail jsonb, event jsonb) ${RETURNING}), ` +
    `events_published AS (${publishCte('events_written')})`
  );
}

/** recordAudit's rows of `recordedEventsCtes` for these entries. */
export function eventRows(entries: readonly EventEntry[]): string {
  return JSON.stringify(entries.map((e) => ({ type: eventType(e.name), subject: `zen:${e.subject}`, detail: e.detail, event: e.event ?? {} })));
}

/** SQL expressions, over the rows a change returned, for one event per row (eventCtes). Fixed text, never values. */
export interface EventRowSql {
  accountId: string;
  /** `zen:<resource>:` followed by this id */
  subjectId: string;
  detail: string;
  /** default {} */
  event?: string;
}

/**
 * The events of a change made in one statement, beside its auditCte: CTEs
 * `<name>` and `<name>_published`, one event per row of `from`. Adds no
 * parameter and no round trip.
 */
export function eventCtes(name: string, from: string, event: EventName, resource: string, row: EventRowSql): string {
  return (
    `${name} AS (${INSERT_INTO}SELECT ${row.accountId}, '${eventType(event)}', 'zen:${resource}:' || ${row.subjectId}, ${row.detail}, ` +
    `${row.event ?? "'{}'::jsonb"}, '${ZENDESK_EVENT_VERSION}' FROM ${from} ${RETURNING}), ` +
    `${name}_published AS (${publishCte(name)})`
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
type Int8 = string | number | bigint;
interface SqlRow {
  id: string; account_id: Int8; type: string; subject: string; detail: Record<string, unknown>; event: Record<string, unknown>; time: Date; zendesk_event_version: string;
}

const SELECT = 'SELECT e.id, e.account_id, e.type, e.subject, e.detail, e.event, e.time, e.zendesk_event_version FROM events e';

const envelope = (r: SqlRow): EventEnvelope => ({
  type: r.type, account_id: Number(r.account_id), id: r.id, time: r.time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  zendesk_event_version: r.zendesk_event_version, subject: r.subject, detail: r.detail, event: r.event,
});

/** Reads events (written only by the statements above). */
export class EventLogRepository {
  constructor(private readonly db: TenantSql) {}

  /** An event of the scope's account in Zendesk's envelope; null when unknown (or not a uuid). */
  async find(scope: AccountScope, id: string): Promise<EventEnvelope | null> {
    if (!UUID.test(id)) return null;
    const [r] = await this.db.query<SqlRow>(scope, `${SELECT} WHERE e.account_id = $1 AND e.id = $2::uuid`, [id]);
    return r ? envelope(r) : null;
  }

  /**
   * A new event by the id its NOTIFY carried, whatever its account (the live
   * feed reads it once for all subscribers, and hands it only to its account's);
   * null when unknown.
   */
  async findPublished(id: string): Promise<EventEnvelope | null> {
    if (!UUID.test(id)) return null;
    const [r] = await this.db.crossTenant<SqlRow>('eventFeed', `${SELECT} WHERE e.id = $1::uuid`, [id]);
    return r ? envelope(r) : null;
  }
}
