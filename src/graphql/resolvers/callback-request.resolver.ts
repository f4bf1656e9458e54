import { Arg, Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import { connectionOf } from '../connection';
import { pageRequest, pageSize } from '../../domain/pagination';
import type { GraphQLContext } from '../context';
import {
  CallbackRequest,
  CallbackRequestConnection,
  CallbackRequestInput,
  CallbackRequestsArgs,
} from '../types/callback-request.types';

/** Agents and admins (docs/api.md, "Voice callback requests"). */
@Resolver(() => CallbackRequest)
export class CallbackRequestResolver {
  @Allow('callbackRequests.create')
  @Mutation(() => CallbackRequest, { description: 'Queues a callback request and returns it with the rate budget; counts against the account limit of 30 per rolling 10 minutes (RATE_LIMITED beyond it)' })
  async createCallbackRequest(
    @Arg('input', () => CallbackRequestInput, { description: 'The request to queue' }) input: CallbackRequestInput,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<CallbackRequest> {
    return CallbackRequest.from(await services.callbackRequests.create(viewer!, input));
  }

  @Allow('callbackRequests.read')
  @Query(() => CallbackRequestConnection, { description: 'Callback requests of the account, id ascending (queue order), for dashboards; cursor pages (first/after)' })
  async callbackRequests(@Args(() => CallbackRequestsArgs) args: CallbackRequestsArgs, @Ctx() { viewer, services }: GraphQLContext): Promise<CallbackRequestConnection> {
    const size = pageSize(pageRequest(args, 50));
    const after = args.after ? services.cursors.decode(args.after) : undefined;
    const { records, hasNextPage, totalCount } = await services.callbackRequests.list(viewer!, { phoneNumberId: args.phoneNumberId, status: args.status, size, after });
    const page = { items: records, hasNextPage, hasPreviousPage: Boolean(args.after), count: async () => totalCount };
    return connectionOf(CallbackRequestConnection, services.cursors, page, (r) => CallbackRequest.from(r));
  }
}
