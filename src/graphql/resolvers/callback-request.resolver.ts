import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import { connectionOf } from '../connection';
import { pageRequest, pageSize } from '../../domain/pagination';
import { NotFoundError } from '../../domain/errors';
import type { GraphQLContext } from '../context';
import {
  CallbackOutcome,
  CallbackRequest,
  CallbackRequestConnection,
  CallbackRequestInput,
  CallbackRequestsArgs,
} from '../types/callback-request.types';

const ID_ARG = { description: "The callback request's id" };

/** Agents and admins (docs/api.md, "Voice callback requests", "The callback lifecycle"). */
@Resolver(() => CallbackRequest)
export class CallbackRequestResolver {
  @Allow('callbackRequests.create')
  @Mutation(() => CallbackRequest, { description: 'Queues a callback request and returns it with the rate budget; counts against the account limit of 30 per rolling 10 minutes (RATE_LIMITED beyond it). A free online agent gets the offer at once' })
  async createCallbackRequest(
    @Arg('input', () => CallbackRequestInput, { description: 'The request to queue' }) input: CallbackRequestInput,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<CallbackRequest> {
    return CallbackRequest.from(await services.callbackRequests.create(viewer!, input));
  }

  @Allow('callbackRequests.read')
  @Query(() => CallbackRequestConnection, { description: 'Callback requests of the account, id ascending (queue order), with their history; cursor pages (first/after)' })
  async callbackRequests(@Args(() => CallbackRequestsArgs) args: CallbackRequestsArgs, @Ctx() { viewer, services }: GraphQLContext): Promise<CallbackRequestConnection> {
    const size = pageSize(pageRequest(args, 50));
    const after = args.after ? services.cursors.decode(args.after) : undefined;
    const { records, hasNextPage, count } = await services.callbackRequests.list(viewer!, {
      phoneNumberId: args.phoneNumberId, agentId: args.agentId, status: args.status, size, after,
    });
    const page = { items: records, hasNextPage, hasPreviousPage: Boolean(args.after), count };
    return connectionOf(CallbackRequestConnection, services.cursors, page, (r) => CallbackRequest.from(r));
  }

  @Allow('callbackRequests.read')
  @Query(() => CallbackRequest, { nullable: true, description: 'A callback request of the account with its history; null when there is none with this id' })
  async callbackRequest(@Arg('id', () => ID, ID_ARG) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<CallbackRequest | null> {
    const found = await services.callbackRequests.find(viewer!, id);
    return found && CallbackRequest.from(found);
  }

  @Allow('callbackRequests.handle')
  @Mutation(() => CallbackRequest, { description: 'The offered agent accepts the offer: the request is dialing and the agent on a call (CONFLICT when it is not offered to the caller)' })
  async acceptCallbackRequest(@Arg('id', () => ID, ID_ARG) id: string, @Ctx() ctx: GraphQLContext): Promise<CallbackRequest> {
    await ctx.services.callbackLifecycle.accept(ctx.viewer!, id);
    return shown(ctx, id);
  }

  @Allow('callbackRequests.handle')
  @Mutation(() => CallbackRequest, { description: 'The offered agent declines the offer: the request goes to the next eligible agent (CONFLICT when it is not offered to the caller)' })
  async declineCallbackRequest(@Arg('id', () => ID, ID_ARG) id: string, @Ctx() ctx: GraphQLContext): Promise<CallbackRequest> {
    await ctx.services.callbackLifecycle.decline(ctx.viewer!, id);
    return shown(ctx, id);
  }

  @Allow('callbackRequests.handle')
  @Mutation(() => CallbackRequest, { description: "Reports a dial's outcome (the dialing agent, an admin, or an integration's token): ANSWERED completes it; NO_ANSWER and BUSY retry it later or fail it; FAILED fails it (CONFLICT unless dialing)" })
  async reportCallbackOutcome(
    @Arg('id', () => ID, ID_ARG) id: string,
    @Arg('outcome', () => CallbackOutcome, { description: 'What became of the call' }) outcome: CallbackOutcome,
    @Ctx() ctx: GraphQLContext,
  ): Promise<CallbackRequest> {
    await ctx.services.callbackLifecycle.outcome(ctx.viewer!, id, outcome);
    return shown(ctx, id);
  }

  @Allow('callbackRequests.handle')
  @Mutation(() => CallbackRequest, { description: 'Cancels a request that has not ended (admins, or the agent who created it); CONFLICT when it is completed, failed or cancelled' })
  async cancelCallbackRequest(@Arg('id', () => ID, ID_ARG) id: string, @Ctx() ctx: GraphQLContext): Promise<CallbackRequest> {
    await ctx.services.callbackLifecycle.cancel(ctx.viewer!, id);
    return shown(ctx, id);
  }
}

/** The request as it is after a change. */
async function shown({ viewer, services }: GraphQLContext, id: string): Promise<CallbackRequest> {
  const found = await services.callbackRequests.find(viewer!, id);
  if (!found) throw new NotFoundError();
  return CallbackRequest.from(found);
}
