import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { pageRequest, readPage } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import { connectionOf, PageArgs } from '../connection';
import type { GraphQLContext } from '../context';
import { ApiToken, ApiTokenConnection, ApiTokenInput } from '../types/api-token.types';

/** API tokens (docs/api.md, "API tokens"): admins. GraphQL `null` stands for "not in this account". */
@Resolver(() => ApiToken)
export class ApiTokenResolver {
  @Allow('apiTokens.read')
  @Query(() => ApiTokenConnection, { description: "The account's API tokens, id ascending: cursor (first/after, last/before) or offset (page/perPage) pages; tokens shown by their first characters" })
  async apiTokens(@Args() args: PageArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<ApiTokenConnection> {
    const page = await readPage(services.cursors, pageRequest(args), services.apiTokens.pages(viewer!));
    return connectionOf(ApiTokenConnection, services.cursors, page, (r) => ApiToken.from(r, baseUrl));
  }

  @Allow('apiTokens.read')
  @Query(() => ApiToken, { nullable: true, description: 'An API token of the account (its first characters only); null when there is none with this id' })
  async apiToken(@Arg('id', () => ID, { description: "The token's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<ApiToken | null> {
    const found = await services.apiTokens.find(viewer!, id);
    return found && ApiToken.from(found, baseUrl);
  }

  @Allow('apiTokens.write')
  @Mutation(() => ApiToken, { description: 'Creates an API token and returns it with the full token, this once: store it now' })
  async createApiToken(@Arg('input', () => ApiTokenInput, { description: 'The new token' }) input: ApiTokenInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<ApiToken> {
    return ApiToken.from(await services.apiTokens.create(viewer!, input), baseUrl);
  }

  @Allow('apiTokens.write')
  @Mutation(() => Boolean, { description: 'Deletes the API token and returns true: the very next sign-in with it fails' })
  async deleteApiToken(@Arg('id', () => ID, { description: "The token's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.apiTokens.delete(viewer!, id);
    return true;
  }
}
