import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { Me } from '../types/directory.types';
import { AuthorizedApp } from '../types/authorized-app.types';

/** A person's own authorized apps (docs/api.md, "Your authorized apps"): every role, their own only. */
@Resolver(() => Me)
export class AuthorizedAppResolver {
  @Allow('authorizedApps.read')
  @FieldResolver(() => [AuthorizedApp], {
    nullable: true,
    description: 'The apps you authorized and the tokens issued to you that still work, newest first (granted at, then id, descending), at most 200',
  })
  async authorizedApps(@Ctx() { viewer, services }: GraphQLContext): Promise<AuthorizedApp[]> {
    return (await services.authorizedApps.list(viewer!)).map((a) => AuthorizedApp.from(a));
  }

  @Allow('authorizedApps.revoke')
  @Mutation(() => Boolean, {
    description: "Revokes one of your authorized apps and returns true: a consent with all its access and refresh tokens, or a token; they fail on the very next request. NOT_FOUND for anything that is not yours and live",
  })
  async revokeAuthorizedApp(@Arg('id', () => ID, { description: 'The entry\'s id: grant-<id> or token-<id>, as authorizedApps gives it' }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.authorizedApps.revoke(viewer!, id);
    return true;
  }
}
