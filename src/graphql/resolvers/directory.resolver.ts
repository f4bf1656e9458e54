import { Ctx, Query, Resolver } from 'type-graphql';
import { Allow } from '../auth-checker';
import { NotFoundError } from '../../domain/errors';
import type { GraphQLContext } from '../context';
import { Account, Group, Me, PhoneNumber, User } from '../types/directory.types';

@Resolver()
export class DirectoryResolver {
  @Allow('users.read')
  @Query(() => Me, { description: 'The authenticated user (or the impersonated end user)' })
  async me(@Ctx() { viewer, services }: GraphQLContext): Promise<Me> {
    const v = viewer!;
    const [user, account] = await Promise.all([
      services.directory.findUser(v.accountId, v.userId),
      services.directory.findAccount(v.accountId),
    ]);
    if (!user || !account) throw new NotFoundError();
    return Object.assign(new Me(), User.from(user), { account: Account.from(account), authenticatedVia: v.via });
  }

  @Allow('directory.read')
  @Query(() => [PhoneNumber], { description: 'Voice phone numbers of the account (agents and admins)' })
  async phoneNumbers(@Ctx() { viewer, services }: GraphQLContext): Promise<PhoneNumber[]> {
    return (await services.directory.listPhoneNumbers(viewer!.accountId)).map(PhoneNumber.from);
  }

  @Allow('directory.read')
  @Query(() => [Group], { description: 'Groups of the account (agents and admins)' })
  async groups(@Ctx() { viewer, services }: GraphQLContext): Promise<Group[]> {
    return (await services.directory.listGroups(viewer!.accountId)).map(Group.from);
  }
}
