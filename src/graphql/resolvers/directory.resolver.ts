import { Ctx, Query, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import { NotFoundError } from '../../domain/errors';
import type { GraphQLContext } from '../context';
import { Account, Me, User } from '../types/directory.types';

@Resolver()
export class DirectoryResolver {
  @Allow('users.read')
  @Query(() => Me, { description: 'The authenticated user (or the impersonated end user)' })
  async me(@Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Me> {
    const v = viewer!;
    const [user, account] = await Promise.all([services.users.find(v, v.userId), services.accounts.find({ accountId: v.accountId })]);
    if (!user || !account) throw new NotFoundError();
    return Object.assign(new Me(), User.from(user, baseUrl), { account: Account.from(account), authenticatedVia: v.via });
  }
}
