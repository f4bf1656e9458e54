import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { pageRequest, readPage } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import { connectionOf } from '../connection';
import type { GraphQLContext } from '../context';
import { WebhookInvocation, WebhookInvocationAttempt, WebhookInvocationConnection, WebhookInvocationsArgs, WebhookTestResponse } from '../types/webhook-invocation.types';

/** What webhooks sent (docs/api.md, "Webhook deliveries"): admins, as webhooks.read. */
@Resolver(() => WebhookInvocation)
export class WebhookInvocationResolver {
  @Allow('webhooks.read')
  @Query(() => WebhookInvocationConnection, { description: "A webhook's invocations (kept at least 7 days), id ascending, in cursor pages; NOT_FOUND when there is no such webhook" })
  async webhookInvocations(@Args() args: WebhookInvocationsArgs, @Ctx() { viewer, services }: GraphQLContext): Promise<WebhookInvocationConnection> {
    const filter = { status: args.status ?? undefined, eventType: args.eventType ?? undefined };
    const source = await services.webhookInvocations.pages(viewer!, args.webhookId, filter);
    return connectionOf(WebhookInvocationConnection, services.cursors, await readPage(services.cursors, pageRequest(args), source), WebhookInvocation.from);
  }

  @Allow('webhooks.read')
  @Query(() => [WebhookInvocationAttempt], { description: "An invocation's attempts, oldest first; NOT_FOUND when the webhook has no such invocation" })
  async webhookInvocationAttempts(
    @Arg('webhookId', () => ID, { description: "The webhook's id" }) webhookId: string,
    @Arg('invocationId', () => ID, { description: "The invocation's id" }) invocationId: string,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<WebhookInvocationAttempt[]> {
    return (await services.webhookInvocations.attempts(viewer!, webhookId, invocationId)).map(WebhookInvocationAttempt.from);
  }

  @Allow('webhooks.write')
  @Mutation(() => WebhookTestResponse, { description: 'Sends a test event (zen:event-type:webhook.test) to the webhook now, signed and guarded like a delivery, and returns the answer; NOT_FOUND when there is no such webhook; CONFLICT when its signing secret cannot be read because HASH_KEY changed (reset it)' })
  async testWebhook(@Arg('id', () => ID, { description: "The webhook's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<WebhookTestResponse> {
    return WebhookTestResponse.from(await services.webhookDeliveries.test(viewer!, id));
  }
}
