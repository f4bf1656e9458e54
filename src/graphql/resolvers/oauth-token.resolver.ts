import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { BadRequestError, UnauthenticatedError } from '../../domain/errors';
import { clampSize, type KeysetPage } from '../../domain/pagination';
import type { GraphQLContext } from '../context';
import { User } from '../types/directory.types';
import { OAuthClient } from '../types/oauth-client.types';
import { CreateOAuthTokenInput, OAuthToken, OAuthTokenConnection, OAuthTokensArgs } from '../types/oauth-token.types';
import { parseId } from '../../domain/ids';

@Resolver(() => OAuthToken)
export class OAuthTokenResolver {
  @Authorized('admin')
  @Query(() => OAuthTokenConnection, { description: 'Tokens of the account (admins), cursor (first/after, last/before) or offset (page/perPage)' })
  async oauthTokens(@Args() args: OAuthTokensArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthTokenConnection> {
    const tokens = services.oauthTokens;
    const count = () => tokens.count(viewer!, args.clientId);
    const connection = (items: Awaited<ReturnType<typeof tokens.listOffset>>, hasNextPage: boolean, hasPreviousPage: boolean) => {
      const edges = items.map((r) => ({ cursor: services.cursors.encode(r.id), node: OAuthToken.from(r, baseUrl) }));
      return Object.assign(new OAuthTokenConnection(), {
        edges,
        pageInfo: { hasNextPage, hasPreviousPage, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
        count,
      });
    };
    if (args.page != null || args.perPage != null) {
      const page = { page: args.page ?? 1, perPage: clampSize(args.perPage) };
      const [items, total] = await Promise.all([tokens.listOffset(viewer!, args.clientId, page), count()]);
      return Object.assign(connection(items, page.page * page.perPage < total, page.page > 1), { count: async () => total });
    }
    if (args.after && args.before) throw new BadRequestError('Use either after or before, not both');
    const backward = args.before != null || (args.last != null && args.first == null);
    const keyset: KeysetPage = { size: clampSize(backward ? args.last : args.first) };
    if (args.after) keyset.after = services.cursors.decode(args.after);
    if (args.before) keyset.before = services.cursors.decode(args.before);
    else if (backward) keyset.before = 9223372036854775807n; // last N from the end
    const page = await tokens.listKeyset(viewer!, args.clientId, keyset);
    return connection(page.items, page.hasNextPage && !(backward && !args.before), page.hasPreviousPage);
  }

  @Authorized()
  @Query(() => OAuthToken, { nullable: true, description: 'Admins: any token of the account; others: their own' })
  async oauthToken(@Arg('id', () => ID) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthToken | null> {
    const found = await services.oauthTokens.find(viewer!, id);
    return found && OAuthToken.from(found, baseUrl);
  }

  // A token may always show and revoke itself, whatever its scopes: no @Authorized.
  @Query(() => OAuthToken, { description: 'The token presented in Authorization: Bearer' })
  async currentOAuthToken(@Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthToken> {
    if (!viewer) throw new UnauthenticatedError();
    return OAuthToken.from(await services.oauthTokens.findCurrent(viewer), baseUrl);
  }

  @Authorized('admin')
  @Mutation(() => OAuthToken, { description: 'Returns the full token, this once. It belongs to the calling admin.' })
  async createOAuthToken(@Arg('input', () => CreateOAuthTokenInput) input: CreateOAuthTokenInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<OAuthToken> {
    return OAuthToken.from(await services.oauthTokens.create(viewer!, input), baseUrl);
  }

  @Authorized()
  @Mutation(() => Boolean)
  async revokeOAuthToken(@Arg('id', () => ID) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.oauthTokens.revoke(viewer!, id);
    return true;
  }

  @Mutation(() => Boolean, { description: 'Revokes the token presented in Authorization: Bearer' })
  async revokeCurrentOAuthToken(@Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    if (!viewer) throw new UnauthenticatedError();
    await services.oauthTokens.revokeCurrent(viewer);
    return true;
  }

  @FieldResolver(() => OAuthClient, { nullable: true })
  async client(@Root() token: OAuthToken, @Ctx() { loaders }: GraphQLContext): Promise<OAuthClient | null> {
    const id = parseId(token.clientId);
    const found = id === null ? null : await loaders!.clientById.load(id);
    return found && OAuthClient.from(found);
  }

  @FieldResolver(() => User, { nullable: true })
  async user(@Root() token: OAuthToken, @Ctx() { loaders }: GraphQLContext): Promise<User | null> {
    const found = await loaders!.userById.load(BigInt(token.userId));
    return found && User.from(found);
  }
}

@Resolver(() => OAuthTokenConnection)
export class OAuthTokenConnectionResolver {
  @FieldResolver(() => Int)
  totalCount(@Root() connection: OAuthTokenConnection): Promise<number> {
    return connection.count();
  }
}

@Resolver(() => OAuthClient)
export class OAuthClientTokensResolver {
  @FieldResolver(() => [OAuthToken], { description: 'Live tokens of the client (first 100, id ascending)' })
  async tokens(@Root() client: OAuthClient, @Ctx() { loaders, baseUrl }: GraphQLContext): Promise<OAuthToken[]> {
    return (await loaders!.tokensByClientId.load(BigInt(client.id))).map((r) => OAuthToken.from(r, baseUrl));
  }
}
