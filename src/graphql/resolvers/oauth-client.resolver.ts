import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { OAuthClient, OAuthClientInput, OAuthClientSecret } from '../types/oauth-client.types';

/** Admins only (docs/api.md, "OAuth clients"). GraphQL `null` stands for "not in this account". */
@Resolver(() => OAuthClient)
export class OAuthClientResolver {
  @Allow('oauthClients.read')
  @Query(() => [OAuthClient], { description: 'All clients of the account, id ascending' })
  async oauthClients(@Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient[]> {
    return (await services.oauthClients.list(viewer!)).map(OAuthClient.from);
  }

  @Allow('oauthClients.read')
  @Query(() => OAuthClient, { nullable: true, description: 'A client of the account; null when there is none with this id' })
  async oauthClient(@Arg('id', () => ID, { description: "The client's id (not its identifier)" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient | null> {
    const found = await services.oauthClients.find(viewer!, id);
    return found && OAuthClient.from(found);
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient, { description: 'Registers a client and returns it with its full secret, this once: store it now' })
  async createOAuthClient(@Arg('input', () => OAuthClientInput, { description: 'The new client' }) input: OAuthClientInput, @Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.create(viewer!, input));
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient, { description: 'Changes a client (omitted fields keep their value) and returns it, secret truncated' })
  async updateOAuthClient(
    @Arg('id', () => ID, { description: "The client's id (not its identifier)" }) id: string,
    @Arg('input', () => OAuthClientInput, { description: 'The fields to change' }) input: OAuthClientInput,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.update(viewer!, id, input));
  }

  @Allow('oauthClients.write')
  @Mutation(() => Boolean, { description: 'Deletes the client, revokes all its tokens and returns true' })
  async deleteOAuthClient(@Arg('id', () => ID, { description: "The client's id (not its identifier)" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.oauthClients.delete(viewer!, id);
    return true;
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient, {
    description: 'A new secret, returned in full this once; the old one stops working at once, or at the grant endpoints after gracePeriod seconds (at most 604800)',
  })
  async generateOAuthClientSecret(
    @Arg('id', () => ID, { description: "The client's id (not its identifier)" }) id: string,
    @Arg('gracePeriod', () => Int, { nullable: true, description: 'Seconds the previous secret keeps working at the grant endpoints, 0..604800; null or 0: it stops at once' }) gracePeriod: number | null,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.regenerateSecret(viewer!, id, gracePeriod));
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient, { description: 'Ends the grace period of the previous secret now: only the current secret stays valid' })
  async endOAuthClientSecretGracePeriod(@Arg('id', () => ID, { description: "The client's id (not its identifier)" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.endSecretGracePeriod(viewer!, id));
  }

  /** Secrets are client data: what oauthClient(id) shows (admins with read). */
  @Allow('oauthClients.read')
  @FieldResolver(() => [OAuthClientSecret], { description: 'Live secrets, never their values: the current one first, then the previous one during a grace period' })
  async secrets(@Root() client: OAuthClient, @Ctx() { loaders }: GraphQLContext): Promise<OAuthClientSecret[]> {
    return (await loaders!.secretsByClientId.load(BigInt(client.id))).map(OAuthClientSecret.from);
  }
}
