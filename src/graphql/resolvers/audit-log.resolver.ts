import { Arg, Args, Ctx, ID, Query, Resolver } from 'type-graphql';
import { pageRequest, readPage } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import { connectionOf } from '../connection';
import type { GraphQLContext } from '../context';
import { AuditLog, AuditLogConnection, AuditLogSort, AuditLogsArgs } from '../types/audit-log.types';

/** The audit log: admins with `read` or the `auditlogs` scope, their account's records. */
@Resolver(() => AuditLog)
export class AuditLogResolver {
  @Allow('auditLogs.read')
  @Query(() => AuditLogConnection, { description: 'Changes in the account, newest first unless sorted otherwise; cursor pages (first/after, last/before)' })
  async auditLogs(@Args() args: AuditLogsArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<AuditLogConnection> {
    const pages = services.auditLogs.pages(viewer!, args.filter, args.sort === AuditLogSort.CREATED_AT_ASC ? 'asc' : 'desc');
    const page = await readPage(services.cursors, pageRequest(args), pages);
    return connectionOf(AuditLogConnection, services.cursors, page, (r) => AuditLog.from(r, baseUrl));
  }

  @Allow('auditLogs.read')
  @Query(() => AuditLog, { nullable: true, description: "A record of the account's audit log; null when there is none with this id" })
  async auditLog(@Arg('id', () => ID, { description: "The audit log record's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<AuditLog | null> {
    const found = await services.auditLogs.find(viewer!, id);
    return found && AuditLog.from(found, baseUrl);
  }
}
