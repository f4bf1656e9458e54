import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { AuditLogRecord } from '../../domain/audit/audit-log.service';
import { AUDIT_SOURCE_TYPES_BY_NAME, type AuditSourceType } from '../../domain/audit/audit-source-types';
import { Connection, CursorPageArgs } from '../connection';

export enum AuditLogAction {
  CREATE = 'create',
  UPDATE = 'update',
  DESTROY = 'destroy',
}
registerEnumType(AuditLogAction, { name: 'AuditLogAction', description: "Zendesk's audit actions" });

/** the domain's list (domain/audit/audit-source-types.ts) under GraphQL's upper-case names */
export const AuditLogSourceType = AUDIT_SOURCE_TYPES_BY_NAME;
export type AuditLogSourceType = AuditSourceType;
registerEnumType(AuditLogSourceType, { name: 'AuditLogSourceType', description: 'What kind of record changed' });

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
});

export enum AuditLogSort {
  CREATED_AT_DESC = 'desc',
  CREATED_AT_ASC = 'asc',
}
registerEnumType(AuditLogSort, { name: 'AuditLogSort', description: 'Newest first (the default, REST sort=-created_at) or oldest first (sort=created_at)' });

const ACTION_LABELS: Record<AuditLogAction, string> = { create: 'Created', update: 'Updated', destroy: 'Deleted' };

@ObjectType({ simpleResolvers: true, description: 'One change to a client, token, user, group, phone number or account setting (Zendesk audit_logs); never a secret value' })
export class AuditLog {
  @Field(() => ID) id!: string;
  @Field(() => AuditLogAction) action!: AuditLogAction;
  @Field({ description: '"Created", "Updated" or "Deleted"' }) actionLabel!: string;
  @Field(() => ID, { nullable: true, description: 'The user who made the change (an impersonating admin, not the end user); null: the system' })
  actorId!: string | null;
  @Field() actorName!: string;
  @Field(() => ID) sourceId!: string;
  @Field(() => AuditLogSourceType) sourceType!: AuditLogSourceType;
  @Field({ description: 'What the record is called: a name, or a token\'s first 10 characters followed by "..."' }) sourceLabel!: string;
  @Field() changeDescription!: string;
  @Field(() => [String], { description: 'Names of the fields that changed (REST snake_case), never their values' }) changedFields!: string[];
  @Field(() => AuditLogVia) via!: AuditLogVia;
  @Field(() => String, { nullable: true, description: 'X-Request-Id of the request that made the change' }) requestId!: string | null;
  @Field(() => String, { nullable: true, description: 'The remote address of that request' }) ipAddress!: string | null;
  @Field() createdAt!: Date;
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

@ObjectType({ simpleResolvers: true, description: 'Relay connection of audit log records, newest first unless sorted otherwise' })
export class AuditLogConnection extends Connection(AuditLog, { totalCount: 'Records matching the filter, all pages' }) {}

@InputType({ description: 'Every given condition must hold' })
export class AuditLogFilter {
  @Field(() => AuditLogSourceType, { nullable: true }) sourceType?: AuditLogSourceType | null;
  @Field(() => ID, { nullable: true, description: 'Changes made by this user' }) actorId?: string | null;
  @Field(() => AuditLogAction, { nullable: true }) action?: AuditLogAction | null;
  @Field(() => Date, { nullable: true, description: 'Created at or after' }) createdFrom?: Date | null;
  @Field(() => Date, { nullable: true, description: 'Created at or before' }) createdTo?: Date | null;
}

@ArgsType()
export class AuditLogsArgs extends CursorPageArgs {
  @Field(() => AuditLogFilter, { nullable: true }) filter?: AuditLogFilter | null;
  @Field(() => AuditLogSort, { nullable: true, description: 'CREATED_AT_DESC (newest first) by default' }) sort?: AuditLogSort | null;
}
