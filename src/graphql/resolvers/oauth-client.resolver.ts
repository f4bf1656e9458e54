import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { OAuthClient, OAuthClientInput } from '../types/oauth-client.types';

/** Admins only (seed §4.1). GraphQL `null` stands for "not in this account". */
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
  @Mutation(() => OAuthClient, { description: 'A new secret, returned in full this once; the old one stops working at once' })
  async generateOAuthClientSecret(@Arg('id', () => ID) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<OAuthClient> {
    return OAuthClient.from(await services.oauthClients.regenerateSecret(viewer!, id));
  }
}
