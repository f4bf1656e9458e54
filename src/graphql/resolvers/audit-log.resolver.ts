import { Arg, Args, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import { pageRequest } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import { pageOf } from '../connection';
import type { GraphQLContext } from '../context';
import { AuditLog, AuditLogConnection, AuditLogSort, AuditLogsArgs } from '../types/audit-log.types';

/** The audit log: admins with `read` or the `auditlogs` scope, their account's records. */
@Resolver(() => AuditLog)
export class AuditLogResolver {
  @Allow('auditLogs.read')
  @Query(() => AuditLogConnection, { description: 'Changes in the account (admins), newest first unless sorted otherwise; cursor pages (first/after, last/before)' })
  async auditLogs(@Args() args: AuditLogsArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<AuditLogConnection> {
    // keyset only: the arguments have no page/perPage
    const request = pageRequest(args);
    if (request.mode !== 'keyset') throw new Error('unreachable: auditLogs has no offset arguments');
    const decode = (cursor: string | undefined) => (cursor === undefined ? undefined : services.cursors.decode(cursor));
    const order = args.sort === AuditLogSort.CREATED_AT_ASC ? 'asc' : 'desc';
    const page = await services.auditLogs.list(viewer!, args.filter, order, {
      size: request.size, after: decode(request.after), before: decode(request.before), backward: request.backward,
    });
    return Object.assign(new AuditLogConnection(), {
      ...pageOf(services.cursors, page.items, (r) => AuditLog.from(r, baseUrl), page),
      count: () => services.auditLogs.count(viewer!, args.filter),
    });
  }

  @Allow('auditLogs.read')
  @Query(() => AuditLog, { nullable: true, description: "A record of the account's audit log; null when there is none with this id" })
  async auditLog(@Arg('id', () => ID) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<AuditLog | null> {
    const found = await services.auditLogs.find(viewer!, id);
    return found && AuditLog.from(found, baseUrl);
  }
}

@Resolver(() => AuditLogConnection)
export class AuditLogConnectionResolver {
  @FieldResolver(() => Int, { description: 'Records matching the filter, all pages' })
  totalCount(@Root() connection: AuditLogConnection): Promise<number> {
    return connection.count();
  }
}
