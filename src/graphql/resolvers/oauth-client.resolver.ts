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
  @Query(() => OAuthClient, { nullable: true })
  async oauthClient(@Arg('id', () => ID) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient | null> {
    const found = await services.oauthClients.find(viewer!, id);
    return found && OAuthClient.from(found);
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient, { description: 'Returns the full client secret, this once' })
  async createOAuthClient(@Arg('input', () => OAuthClientInput) input: OAuthClientInput, @Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.create(viewer!, input));
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient)
  async updateOAuthClient(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => OAuthClientInput) input: OAuthClientInput,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.update(viewer!, id, input));
  }

  @Allow('oauthClients.write')
  @Mutation(() => Boolean, { description: 'Deletes the client and revokes all its tokens' })
  async deleteOAuthClient(@Arg('id', () => ID) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.oauthClients.delete(viewer!, id);
    return true;
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient, {
    description: 'A new secret, returned in full this once; the old one stops working at once, or at the grant endpoints after gracePeriod seconds (at most 604800)',
  })
  async generateOAuthClientSecret(
    @Arg('id', () => ID) id: string,
    @Arg('gracePeriod', () => Int, { nullable: true }) gracePeriod: number | null,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.regenerateSecret(viewer!, id, gracePeriod));
  }

  @Allow('oauthClients.write')
  @Mutation(() => OAuthClient, { description: 'Ends the grace period of the previous secret now: only the current secret stays valid' })
  async endOAuthClientSecretGracePeriod(@Arg('id', () => ID) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.endSecretGracePeriod(viewer!, id));
  }

  /** Secrets are client data: what oauthClient(id) shows (admins with read). */
  @Allow('oauthClients.read')
  @FieldResolver(() => [OAuthClientSecret], { description: 'Live secrets: the current one first, then the previous one during a grace period' })
  async secrets(@Root() client: OAuthClient, @Ctx() { loaders }: GraphQLContext): Promise<OAuthClientSecret[]> {
    return (await loaders!.secretsByClientId.load(BigInt(client.id))).map(OAuthClientSecret.from);
  }
}
