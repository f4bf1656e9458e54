import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { AuditLogRecord } from '../../domain/audit/audit-log.service';
import { AUDIT_SOURCE_TYPES_BY_NAME, type AuditSourceType } from '../../domain/audit/audit-source-types';
import { Connection, CursorPageArgs } from '../connection';

export enum AuditLogAction {
  CREATE = 'create',
  UPDATE = 'update',
  DESTROY = 'destroy',
}
registerEnumType(AuditLogAction, {
  name: 'AuditLogAction',
  description: "What happened to the record (Zendesk's audit actions)",
  valuesConfig: {
    CREATE: { description: 'The record was created' },
    UPDATE: { description: 'Fields of the record changed (listed in changedFields)' },
    DESTROY: { description: 'The record was deleted (or, for a user, deactivated by a delete)' },
  },
});

/** the domain's list (domain/audit/audit-source-types.ts) under GraphQL's upper-case names */
export const AuditLogSourceType = AUDIT_SOURCE_TYPES_BY_NAME;
export type AuditLogSourceType = AuditSourceType;
const SOURCE_TYPE_DESCRIPTIONS: Record<keyof typeof AuditLogSourceType, string> = {
  ACCOUNT: "The account's settings",
  USER: 'A user (REST source_type "user")',
  GROUP: 'A group of agents',
  VOICE_PHONE_NUMBER: 'A voice phone number (REST source_type "voice_phone_number")',
  OAUTH_CLIENT: 'An OAuth client, its secrets included (never their values)',
  OAUTH_TOKEN: 'An OAuth access token (shown by its first 10 characters)',
  WEBHOOK: 'A webhook, its signing secret included (never its value)',
  GROUP_MEMBERSHIP: 'A membership of an agent in a group (REST source_type "group_membership")',
  CALLBACK_REQUEST: "A voice callback request's lifecycle (offered, accepted, dialing, completed, requeued, failed, cancelled)",
  API_TOKEN: 'An API token (shown by its first 10 characters, never in full)',
};
registerEnumType(AuditLogSourceType, {
  name: 'AuditLogSourceType',
  description: 'What kind of record changed',
  valuesConfig: Object.fromEntries(Object.entries(SOURCE_TYPE_DESCRIPTIONS).map(([name, description]) => [name, { description }])),
});

export enum AuditLogVia {
  API = 'api',
  GRAPHQL = 'graphql',
  OAUTH = 'oauth',
  CLI = 'cli',
  SYSTEM = 'system',
}
registerEnumType(AuditLogVia, {
  name: 'AuditLogVia',
  description: 'How the change arrived: REST (/api/v2), GraphQL, the OAuth endpoints, the command line, or the service itself',
  valuesConfig: {
    API: { description: 'The REST API (/api/v2/…)' },
    GRAPHQL: { description: 'The GraphQL API (/graphql)' },
    OAUTH: { description: 'The OAuth endpoints (/oauth/…): a grant, a consent, a revocation' },
    CLI: { description: 'The command line (npm run cli)' },
    SYSTEM: { description: 'The service itself (e.g. the first admin created at the first start)' },
  },
});

export enum AuditLogSort {
  CREATED_AT_DESC = 'desc',
  CREATED_AT_ASC = 'asc',
}
registerEnumType(AuditLogSort, {
  name: 'AuditLogSort',
  description: 'The order of audit log records',
  valuesConfig: {
    CREATED_AT_DESC: { description: 'Newest first: the default (REST sort=-created_at)' },
    CREATED_AT_ASC: { description: 'Oldest first (REST sort=created_at)' },
  },
});

const ACTION_LABELS: Record<AuditLogAction, string> = { create: 'Created', update: 'Updated', destroy: 'Deleted' };

@ObjectType({ simpleResolvers: true, description: 'One change to a client, token, user, group, phone number or account setting (Zendesk audit_logs); never a secret value' })
export class AuditLog {
  @Field(() => ID, { description: "The record's id" }) id!: string;
  @Field(() => AuditLogAction, { description: 'What happened to the record' }) action!: AuditLogAction;
  @Field({ description: '"Created", "Updated" or "Deleted"' }) actionLabel!: string;
  @Field(() => ID, { nullable: true, description: 'The user who made the change (an impersonating admin, not the end user); null: the system' })
  actorId!: string | null;
  @Field({ description: 'The name of that user at the time of the change; "CLI" or "System" when no user made it' }) actorName!: string;
  @Field(() => ID, { description: 'The id of the record that changed' }) sourceId!: string;
  @Field(() => AuditLogSourceType, { description: 'What kind of record changed' }) sourceType!: AuditLogSourceType;
  @Field({ description: 'What the record is called: a name, or a token\'s first 10 characters followed by "..."' }) sourceLabel!: string;
  @Field({ description: 'What changed, in a sentence (e.g. "Updated name, scopes"); never a secret value' }) changeDescription!: string;
  @Field(() => [String], { description: 'Names of the fields that changed (REST snake_case), never their values' }) changedFields!: string[];
  @Field(() => AuditLogVia, { description: 'How the change arrived' }) via!: AuditLogVia;
  @Field(() => String, { nullable: true, description: 'X-Request-Id of the request that made the change' }) requestId!: string | null;
  @Field(() => String, { nullable: true, description: 'The remote address of that request' }) ipAddress!: string | null;
  @Field({ description: 'When the change was made (ISO 8601, UTC)' }) createdAt!: Date;
  @Field({ description: 'REST URL of this record' }) url!: string;

  static from(r: AuditLogRecord, baseUrl: string): AuditLog {
    return Object.assign(new AuditLog(), {
      id: String(r.id),
      action: r.action as AuditLogAction,
      actionLabel: ACTION_LABELS[r.action as AuditLogAction] ?? r.action,
      actorId: r.actorId === null ? null : String(r.actorId),
      actorName: r.actorName,
      sourceId: String(r.sourceId),
      sourceType: r.sourceType as AuditLogSourceType,
      sourceLabel: r.sourceLabel,
      changeDescription: r.description,
      changedFields: r.changedFields,
      via: r.via as AuditLogVia,
      requestId: r.requestId,
      ipAddress: r.ipAddress,
      createdAt: r.createdAt,
      url: `${baseUrl}/api/v2/audit_logs/${r.id}.json`,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'A page of audit log records, newest first unless sorted otherwise (Relay connection)' })
export class AuditLogConnection extends Connection(AuditLog, { totalCount: 'Records matching the filter, all pages' }) {}

@InputType({ description: 'Every given condition must hold' })
export class AuditLogFilter {
  @Field(() => AuditLogSourceType, { nullable: true, description: 'Changes to this kind of record' }) sourceType?: AuditLogSourceType | null;
  @Field(() => ID, { nullable: true, description: 'Changes made by this user' }) actorId?: string | null;
  @Field(() => AuditLogAction, { nullable: true, description: 'Changes of this kind' }) action?: AuditLogAction | null;
  @Field(() => Date, { nullable: true, description: 'Changes made at or after this time (ISO 8601)' }) createdFrom?: Date | null;
  @Field(() => Date, { nullable: true, description: 'Changes made at or before this time (ISO 8601)' }) createdTo?: Date | null;
}

@ArgsType()
export class AuditLogsArgs extends CursorPageArgs {
  @Field(() => AuditLogFilter, { nullable: true, description: 'Only the records that match every given condition' }) filter?: AuditLogFilter | null;
  @Field(() => AuditLogSort, { nullable: true, description: 'CREATED_AT_DESC (newest first) by default' }) sort?: AuditLogSort | null;
}
