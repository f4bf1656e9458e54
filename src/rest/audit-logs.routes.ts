import { Type } from 'typebox';
import { RestListAuditLogsDocument, RestShowAuditLogDocument, type RestAuditLogFragment, type RestListAuditLogsQueryVariables } from '../generated/graphql';
import { BadRequestError } from '../domain/errors';
import { AUDIT_SOURCE_TYPES, type AuditSourceType } from '../domain/audit/audit-source-types';
import { defineRoute, type AnyRestRoute, type RestRequest } from './adapter';
import { isoSeconds } from './body';
import { cursorPageFields, cursorVariables } from './pagination';
import { showRoute } from './record-routes';
import { answer, errorResponses, INVALID, Keyed, Nullable, PageFields, PageQuery, QueryString, StringEnum, Timestamp } from './schemas';

// The query parameters' values, as the GraphQL enums name them.
const SOURCE_TYPES = Object.fromEntries(AUDIT_SOURCE_TYPES.map((t) => [t, t.toUpperCase()])) as { [T in AuditSourceType]: Uppercase<T> };
const ACTIONS = { create: 'CREATE', update: 'UPDATE', destroy: 'DESTROY' } as const;
const SORTS = { '-created_at': 'CREATED_AT_DESC', created_at: 'CREATED_AT_ASC' } as const;
const VIAS = ['api', 'cli', 'graphql', 'oauth', 'system'] as const;

type Keys<T> = (keyof T & string)[];
const keysOf = <T extends object>(values: T) => Object.keys(values) as Keys<T>;

/** Zendesk's audit log JSON, and ours beside it: changed_fields, request_id, via. */
const AuditLogJson = Type.Object(
  {
    url: Type.String({ format: 'uri' }),
    id: Type.Integer(),
    action_label: Type.String({ description: 'Created, Updated or Deleted' }),
    actor_id: Nullable(Type.Integer(), { description: 'The user who made the change; null for the system' }),
    actor_name: Type.String(),
    source_id: Type.Integer({ description: 'The id of the changed record' }),
    source_type: StringEnum(keysOf(SOURCE_TYPES)),
    source_label: Type.String({ description: 'The name of the changed record at the time' }),
    action: StringEnum(keysOf(ACTIONS)),
    change_description: Type.String(),
    ip_address: Nullable(Type.String()),
    created_at: Timestamp,
    changed_fields: Type.Array(Type.String(), { description: 'The snake_case names of the changed fields (never their values)' }),
    request_id: Nullable(Type.String(), { description: 'The X-Request-Id of the request that made the change' }),
    via: StringEnum(VIAS, { description: 'REST (/api/v2), GraphQL, the OAuth endpoints, the command line, or the service itself' }),
  },
  {
    additionalProperties: false,
    title: 'AuditLog',
    examples: [{
      url: 'https://help.example.com/api/v2/audit_logs/7.json', id: 7, action_label: 'Updated', actor_id: 1, actor_name: 'Admin', source_id: 3, source_type: 'oauth_client',
      source_label: 'Dashboard', action: 'update', change_description: 'Generated a new client secret; the previous one stopped working', ip_address: '127.0.0.1',
      created_at: '2026-11-23T10:02:11Z', changed_fields: ['client_secret'], request_id: '5f0c2a1e-8d7b-4c3f-9a51-0e6b2d4c7f10', via: 'api',
    }],
  },
);

/** Zendesk's audit log JSON, and ours beside it: changed_fields, request_id, via. */
function serializeAuditLog(l: RestAuditLogFragment) {
  return {
    url: l.url,
    id: Number(l.id),
    action_label: l.actionLabel,
    actor_id: l.actorId === null || l.actorId === undefined ? null : Number(l.actorId),
    actor_name: l.actorName,
    source_id: Number(l.sourceId),
    source_type: l.sourceType.toLowerCase() as keyof typeof SOURCE_TYPES,
    source_label: l.sourceLabel,
    action: l.action.toLowerCase() as keyof typeof ACTIONS,
    change_description: l.changeDescription,
    ip_address: l.ipAddress ?? null,
    created_at: isoSeconds(l.createdAt)!,
    changed_fields: l.changedFields,
    request_id: l.requestId ?? null,
    via: l.via.toLowerCase() as (typeof VIAS)[number],
  };
}

/** `<name> must be one of: …`, the 400 of a value outside `values`. */
const oneOf = <T extends object>(name: string, values: T, description: string) =>
  Type.Optional(StringEnum(keysOf(values), { description, [INVALID]: `${name} must be one of: ${keysOf(values).join(', ')}` }));

/** ISO 8601 date-time with a zone; a '+' of the offset left unencoded in the URL arrives as a space. */
const DATE_TIME = '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,9})?)?([Zz]|[+ -][0-9]{2}:[0-9]{2})$';
const RANGE_INVALID = 'filter[created_at][] must be given twice, the start and the end of the range, as ISO 8601 date-times (2026-11-23T10:00:00Z)';
const range = (description: string) =>
  Type.Optional(Type.Array(Type.String({ pattern: DATE_TIME }), { minItems: 2, maxItems: 2, description, [INVALID]: RANGE_INVALID }));

const ListQuery = Type.Object({
  'filter[source_type]': oneOf('filter[source_type]', SOURCE_TYPES, 'Only changes of records of this type'),
  'filter[actor_id]': QueryString({ pattern: '^[1-9][0-9]{0,18}$', invalid: 'filter[actor_id] must be a positive integer', description: 'Only changes made by this user' }),
  'filter[action]': oneOf('filter[action]', ACTIONS, 'Only changes of this kind'),
  'filter[created_at][]': range('Given twice: the start and the end of a range, both included, as ISO 8601 date-times with a zone (2026-11-23T10:00:00Z, 2026-11-23T12:00:00%2B02:00)'),
  'filter[created_at]': range('The same as filter[created_at][]'),
  sort: oneOf('sort', SORTS, '-created_at (default, newest first) or created_at (oldest first)'),
  'page[size]': PageQuery['page[size]'],
  'page[after]': PageQuery['page[after]'],
  'page[before]': PageQuery['page[before]'],
});

const LIST_SCHEMA = {
  operationId: 'listAuditLogs', summary: 'List the audit log', tags: ['Audit logs'],
  description: 'Changes in the account, newest first unless sorted otherwise, in cursor pages (page[size], page[after], page[before]). Filters combine. Admins; Bearer tokens with read or auditlogs:read.',
  querystring: ListQuery,
  response: {
    200: answer(
      Type.Object({ audit_logs: Type.Array(AuditLogJson), meta: PageFields.meta, links: PageFields.links }, { additionalProperties: false }),
      'A page of the audit log, with meta and links',
    ),
    ...errorResponses(),
  },
};

/**
 * GET /audit_logs's query → the operation's variables (the schema checked the shapes; a
 * date that does not exist is 400 here; the resolver checks the rest: range order, cursors).
 */
function listVariables(req: RestRequest<typeof LIST_SCHEMA>): RestListAuditLogsQueryVariables {
  const q = req.query;
  const given = [...(q['filter[created_at][]'] ?? []), ...(q['filter[created_at]'] ?? [])].map((v) => v.replace(' ', '+'));
  if (given.length > 0 && (given.length !== 2 || given.some((v) => Number.isNaN(Date.parse(v))))) throw new BadRequestError(RANGE_INVALID);
  const [createdFrom, createdTo] = given.map((v) => new Date(v).toISOString());
  const sourceType = q['filter[source_type]'];
  const action = q['filter[action]'];
  const filter = {
    sourceType: sourceType && SOURCE_TYPES[sourceType], actorId: q['filter[actor_id]'], action: action && ACTIONS[action], createdFrom, createdTo,
  };
  const sort = q.sort && SORTS[q.sort];
  return { filter, sort, ...cursorVariables(q) };
}

/** The audit log (admins; Bearer tokens with read or auditlogs:read): cursor pages only, newest first by default. */
export const auditLogRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/audit_logs'],
    document: RestListAuditLogsDocument,
    schema: LIST_SCHEMA,
    variables: listVariables,
    respond: (data, req) => {
      const { edges, pageInfo } = data.auditLogs;
      return { status: 200, body: { audit_logs: edges.map((e) => serializeAuditLog(e.node)), ...cursorPageFields(req, pageInfo) } };
    },
  }),
  showRoute({
    path: '/audit_logs/:id',
    document: RestShowAuditLogDocument,
    schema: { operationId: 'showAuditLog', summary: 'Show an audit log record', tags: ['Audit logs'], description: 'Admins; Bearer tokens with read or auditlogs:read.' },
    answer: { schema: Keyed('audit_log', AuditLogJson), description: 'The record' },
    body: (data) => data.auditLog && { audit_log: serializeAuditLog(data.auditLog) },
  }),
];
