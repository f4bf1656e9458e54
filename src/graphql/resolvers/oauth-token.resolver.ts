import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageRequest, readPage } from '../../domain/pagination';
import { parseId } from '../../domain/ids';
import { Allow } from '../auth-checker';
import { connectionOf } from '../connection';
import type { GraphQLContext } from '../context';
import { User } from '../types/directory.types';
import { OAuthClient } from '../types/oauth-client.types';
import { CreateOAuthTokenInput, OAuthToken, OAuthTokenConnection, OAuthTokensArgs } from '../types/oauth-token.types';

@Resolver(() => OAuthToken)
export class OAuthTokenResolver {
  @Allow('oauthTokens.list')
  @Query(() => OAuthTokenConnection, {
    description: "The calling admin's own tokens, or with all: true every token of the account; cursor (first/after, last/before) or offset (page/perPage) pages",
  })
  async oauthTokens(@Args() args: OAuthTokensArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthTokenConnection> {
    const pages = services.oauthTokens.pages(viewer!, { all: args.all ?? false, clientId: args.clientId });
    const page = await readPage(services.cursors, pageRequest(args), pages);
    return connectionOf(OAuthTokenConnection, services.cursors, page, (r) => OAuthToken.from(r, baseUrl));
  }

  @Allow('oauthTokens.read')
  @Query(() => OAuthToken, { nullable: true, description: 'A token by id: admins see any token of the account, others their own; null otherwise' })
  async oauthToken(@Arg('id', () => ID, { description: "The token's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthToken | null> {
    const found = await services.oauthTokens.find(viewer!, id);
    return found && OAuthToken.from(found, baseUrl);
  }

  // A token may always show and revoke itself, whatever its scopes.
  @Allow('oauthTokens.current')
  @Query(() => OAuthToken, { description: 'The token presented in Authorization: Bearer (a token may always show itself, whatever its scopes); with Basic, BAD_REQUEST' })
  async currentOAuthToken(@Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthToken> {
    return OAuthToken.from(await services.oauthTokens.findCurrent(viewer!), baseUrl);
  }

  @Allow('oauthTokens.create')
  @Mutation(() => OAuthToken, { description: 'Creates a token for the calling admin and returns it in full, this once: store it now' })
  async createOAuthToken(@Arg('input', () => CreateOAuthTokenInput, { description: 'The client and scopes of the new token' }) input: CreateOAuthTokenInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthToken> {
    return OAuthToken.from(await services.oauthTokens.create(viewer!, input), baseUrl);
  }

  @Allow('oauthTokens.revoke')
  @Mutation(() => Boolean, { description: 'Revokes a token (admins: any of the account; others: their own) and returns true; it fails on the very next request' })
  async revokeOAuthToken(@Arg('id', () => ID, { description: "The token's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.oauthTokens.revoke(viewer!, id);
    return true;
  }

  @Allow('oauthTokens.current')
  @Mutation(() => Boolean, { description: 'Revokes the token presented in Authorization: Bearer and returns true; with Basic, BAD_REQUEST' })
  async revokeCurrentOAuthToken(@Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.oauthTokens.revokeCurrent(viewer!);
    return true;
  }

  /** The client of a token: what oauthClient(id) would show the viewer (admins with read). */
  @Allow('oauthClients.read')
  @FieldResolver(() => OAuthClient, { nullable: true, description: 'The client the token was issued to; null once deleted' })
  client(@Root() token: OAuthToken, @Ctx() { loaders }: GraphQLContext): Promise<OAuthClient | null> | null {
    const id = parseId(token.clientId);
    return id === null ? null : loaders!.clientById.load(id);
  }

  /** The user of a token: themselves for anyone with read, any user of the account for admins with read; else null. */
  @Allow('users.read')
  @FieldResolver(() => User, { nullable: true, description: 'The user the token acts for: yourself, or (admins) any user of the account; null otherwise' })
  user(@Root() token: OAuthToken, @Ctx() { loaders }: GraphQLContext): Promise<User | null> {
    return loaders!.userById.load(BigInt(token.userId));
  }
}

@Resolver(() => OAuthClient)
export class OAuthClientTokensResolver {
  /** What oauthTokens(clientId, all: true) would list for the viewer (admins with read). */
  @Allow('oauthTokens.list')
  @FieldResolver(() => [OAuthToken], { description: 'Live tokens of the client, whoever they belong to (first 100, id ascending)' })
  async tokens(@Root() client: OAuthClient, @Ctx() { loaders, baseUrl }: GraphQLContext): Promise<OAuthToken[]> {
    return (await loaders!.tokensByClientId.load(BigInt(client.id))).map((r) => OAuthToken.from(r, baseUrl));
  }
}
