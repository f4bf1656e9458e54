import { RestListAuditLogsDocument, RestShowAuditLogDocument, type RestAuditLogFragment, type RestListAuditLogsQueryVariables } from '../generated/graphql';
import { BadRequestError, NotFoundError } from '../domain/errors';
import { defineRoute, type AnyRestRoute, type RestRequest } from './adapter';
import { isoSeconds } from './body';
import { cursorPageFields, intParam, queryParam } from './query';

/** Zendesk's audit log JSON, and ours beside it: changed_fields, request_id, via. */
export function serializeAuditLog(l: RestAuditLogFragment) {
  return {
    url: l.url,
    id: Number(l.id),
    action_label: l.actionLabel,
    actor_id: l.actorId === null || l.actorId === undefined ? null : Number(l.actorId),
    actor_name: l.actorName,
    source_id: Number(l.sourceId),
    source_type: l.sourceType.toLowerCase(),
    source_label: l.sourceLabel,
    action: l.action.toLowerCase(),
    change_description: l.changeDescription,
    ip_address: l.ipAddress ?? null,
    created_at: isoSeconds(l.createdAt),
    changed_fields: l.changedFields,
    request_id: l.requestId ?? null,
    via: l.via.toLowerCase(),
  };
}

// The query parameters' values, as the GraphQL enums name them.
const SOURCE_TYPES = {
  account: 'ACCOUNT', user: 'USER', group: 'GROUP', voice_phone_number: 'VOICE_PHONE_NUMBER', oauth_client: 'OAUTH_CLIENT', oauth_token: 'OAUTH_TOKEN',
} as const;
const ACTIONS = { create: 'CREATE', update: 'UPDATE', destroy: 'DESTROY' } as const;
const SORTS = { '-created_at': 'CREATED_AT_DESC', created_at: 'CREATED_AT_ASC' } as const;
/** ISO 8601 date-time with a zone; a '+' of the offset left unencoded in the URL arrives as a space */
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)$/i;

/** A parameter that must be one of `values`' keys: its value there, undefined when absent, else 400. */
function oneOf<T extends Record<string, string>>(req: RestRequest, name: string, values: T): T[keyof T] | undefined {
  const raw = queryParam(req.query, name);
  if (raw === undefined || raw === '') return undefined;
  if (!Object.prototype.hasOwnProperty.call(values, raw)) throw new BadRequestError(`${name} must be one of: ${Object.keys(values).join(', ')}`);
  return values[raw as keyof T];
}

/** Every value of a repeatable parameter. */
function allOf(req: RestRequest, name: string): unknown[] {
  const v = req.query[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/**
 * GET /audit_logs's query → the operation's variables; anything malformed is 400
 * InvalidRequest here (the shapes only: the resolver checks the rest).
 */
function listVariables(req: RestRequest): RestListAuditLogsQueryVariables {
  const actorId = queryParam(req.query, 'filter[actor_id]') || undefined;
  if (actorId !== undefined && !/^[1-9]\d{0,18}$/.test(actorId)) throw new BadRequestError('filter[actor_id] must be a positive integer');
  const range = [...allOf(req, 'filter[created_at][]'), ...allOf(req, 'filter[created_at]')].map((v) => (typeof v === 'string' ? v.replace(' ', '+') : v));
  if (range.length > 0 && (range.length !== 2 || !range.every((v) => typeof v === 'string' && DATE_TIME.test(v) && !Number.isNaN(Date.parse(v))))) {
    throw new BadRequestError('filter[created_at][] must be given twice, the start and the end of the range, as ISO 8601 date-times (2026-11-23T10:00:00Z)');
  }
  const [createdFrom, createdTo] = range.map((v) => new Date(v as string).toISOString());
  const filter = {
    sourceType: oneOf(req, 'filter[source_type]', SOURCE_TYPES), actorId, action: oneOf(req, 'filter[action]', ACTIONS), createdFrom, createdTo,
  };
  const sort = oneOf(req, 'sort', SORTS);
  const size = intParam(req.query, 'page[size]');
  const after = queryParam(req.query, 'page[after]') || undefined;
  const before = queryParam(req.query, 'page[before]') || undefined;
  return { filter, sort, ...(before ? { last: size, before } : { first: size, after }) };
}

/** The audit log (admins; Bearer tokens with read or auditlogs:read): cursor pages only, newest first by default. */
export const auditLogRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/audit_logs'],
    document: RestListAuditLogsDocument,
    variables: listVariables,
    respond: (data, req) => {
      const { edges, pageInfo } = data.auditLogs;
      const backward = Boolean(queryParam(req.query, 'page[before]'));
      return { status: 200, body: { audit_logs: edges.map((e) => serializeAuditLog(e.node)), ...cursorPageFields(pageInfo, backward, req.baseUrl, req.url) } };
    },
  }),
  defineRoute({
    method: 'GET',
    paths: ['/audit_logs/:id'],
    document: RestShowAuditLogDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => {
      if (!data.auditLog) throw new NotFoundError();
      return { status: 200, body: { audit_log: serializeAuditLog(data.auditLog) } };
    },
  }),
];
