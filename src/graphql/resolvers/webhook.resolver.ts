import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { pageRequest, readPage } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import { connectionOf } from '../connection';
import type { GraphQLContext } from '../context';
import { Webhook, WebhookConnection, WebhookInput, WebhookSigningSecret, WebhooksArgs } from '../types/webhook.types';

/** Webhooks (docs/api.md, "Webhooks"): admins. */
@Resolver(() => Webhook)
export class WebhookResolver {
  @Allow('webhooks.read')
  @Query(() => WebhookConnection, { description: "The account's webhooks, id ascending, in cursor pages (first/after, last/before), optionally filtered" })
  async webhooks(@Args() args: WebhooksArgs, @Ctx() { viewer, services }: GraphQLContext): Promise<WebhookConnection> {
    const filter = { status: args.status ?? undefined, nameContains: args.nameContains ?? undefined };
    const page = await readPage(services.cursors, pageRequest(args), services.webhooks.pages(viewer!, filter));
    return connectionOf(WebhookConnection, services.cursors, page, Webhook.from);
  }

  @Allow('webhooks.read')
  @Query(() => Webhook, { nullable: true, description: 'A webhook of the account; null when there is none with this id' })
  async webhook(@Arg('id', () => ID, { description: "The webhook's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<Webhook | null> {
    const found = await services.webhooks.find(viewer!, id);
    return found && Webhook.from(found);
  }

  @Allow('webhooks.read')
  @Query(() => WebhookSigningSecret, { description: "A webhook's signing secret, in full; NOT_FOUND when there is no such webhook; CONFLICT when HASH_KEY changed since it was made (reset it)" })
  async webhookSigningSecret(@Arg('id', () => ID, { description: "The webhook's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<WebhookSigningSecret> {
    return WebhookSigningSecret.from(await services.webhooks.signingSecret(viewer!, id));
  }

  @Allow('webhooks.write')
  @Mutation(() => Webhook, { description: 'Creates a webhook (at most 50 per account) with a new signing secret, and returns it' })
  async createWebhook(@Arg('input', () => WebhookInput, { description: 'The new webhook' }) input: WebhookInput, @Ctx() { viewer, services }: GraphQLContext): Promise<Webhook> {
    return Webhook.from(await services.webhooks.create(viewer!, input));
  }

  @Allow('webhooks.write')
  @Mutation(() => Webhook, { description: 'Changes a webhook and returns it: the given fields (REST PATCH), or, with replace, all of them (REST PUT)' })
  async updateWebhook(
    @Arg('id', () => ID, { description: "The webhook's id" }) id: string,
    @Arg('input', () => WebhookInput, { description: 'The fields to change' }) input: WebhookInput,
    @Arg('replace', { defaultValue: false, description: 'true: replace the webhook (omitted required fields are refused, omitted optional ones cleared); false: change the given fields only' })
    replace: boolean,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<Webhook> {
    return Webhook.from(await services.webhooks.update(viewer!, id, input, replace ? 'replace' : 'patch'));
  }

  @Allow('webhooks.write')
  @Mutation(() => Boolean, { description: 'Deletes the webhook and returns true' })
  async deleteWebhook(@Arg('id', () => ID, { description: "The webhook's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.webhooks.delete(viewer!, id);
    return true;
  }

  @Allow('webhooks.write')
  @Mutation(() => WebhookSigningSecret, { description: 'Gives the webhook a new signing secret and returns it; the previous one stops signing at once' })
  async resetWebhookSigningSecret(@Arg('id', () => ID, { description: "The webhook's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<WebhookSigningSecret> {
    return WebhookSigningSecret.from(await services.webhooks.resetSigningSecret(viewer!, id));
  }
}
