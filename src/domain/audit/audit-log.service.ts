import { BadRequestError } from '../errors';
import { parseId } from '../ids';
import { accountScope } from '../authorization';
import type { PageSource } from '../pagination';
import type { Viewer } from '../auth/viewer';
import type { AuditAction, AuditLogFilter, AuditLogOrder, AuditLogRecord, AuditLogRepository, AuditSourceType } from './audit-log.repository';

export type { AuditLogRecord, AuditLogOrder } from './audit-log.repository';

/** A filter as the APIs take it: enums already checked by GraphQL, ids and dates still raw. */
export interface AuditLogFilterInput {
  sourceType?: AuditSourceType | null;
  actorId?: unknown;
  action?: AuditAction | null;
  createdFrom?: Date | null;
  createdTo?: Date | null;
}

function validDate(value: Date | null | undefined, name: string): Date | undefined {
  if (value === null || value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new BadRequestError(`${name} must be an ISO 8601 date-time`);
  return value;
}

/** A bad filter is the caller's mistake: 400, never an empty page that looks like an answer. */
function checkFilter(input: AuditLogFilterInput | null | undefined): AuditLogFilter {
  const filter: AuditLogFilter = {};
  if (!input) return filter;
  if (input.sourceType != null) filter.sourceType = input.sourceType;
  if (input.action != null) filter.action = input.action;
  if (input.actorId != null) {
    const id = parseId(input.actorId);
    if (id === null) throw new BadRequestError('The actor id filter must be a positive integer');
    filter.actorId = id;
  }
  filter.createdFrom = validDate(input.createdFrom, 'The start of the created_at range');
  filter.createdTo = validDate(input.createdTo, 'The end of the created_at range');
  if (filter.createdFrom && filter.createdTo && filter.createdFrom > filter.createdTo) {
    throw new BadRequestError('The created_at range ends before it starts');
  }
  return filter;
}

/**
 * The audit log (Zendesk's audit_logs), read only: admins, with `read` or the
 * `auditlogs` scope (POLICY 'auditLogs.read'), on their account's records.
 */
export class AuditLogService {
  constructor(private readonly logs: AuditLogRepository) {}

  async find(viewer: Viewer, rawId: unknown): Promise<AuditLogRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.logs.find(accountScope(viewer), id);
  }

  /** The records matching the filter, in `order`, for readPage() (cursor pages only). */
  pages(viewer: Viewer, filter: AuditLogFilterInput | null | undefined, order: AuditLogOrder): PageSource<AuditLogRecord> {
    return {
      keyset: (page) => this.logs.listKeyset(accountScope(viewer), checkFilter(filter), order, page),
      count: () => this.logs.count(accountScope(viewer), checkFilter(filter)),
    };
  }
}
