import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { pageRequest, readPage } from '../../domain/pagination';
import type { Role } from '../../domain/auth/viewer';
import { Allow } from '../auth-checker';
import { connectionOf } from '../connection';
import type { GraphQLContext } from '../context';
import { CreateUserInput, UpdateUserInput, User, UserConnection, UsersArgs } from '../types/directory.types';

/** Users (docs/api.md, "Users"): admins list and manage the account's; anyone reads themselves and sets their own password. */
@Resolver(() => User)
export class UserResolver {
  @Allow('users.list')
  @Query(() => UserConnection, { description: 'Users of the account (admins), id ascending: cursor (first/after, last/before) or offset (page/perPage)' })
  async users(@Args() args: UsersArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<UserConnection> {
    const page = await readPage(services.cursors, pageRequest(args), services.users.pages(viewer!, (args.role ?? undefined) as Role | undefined));
    return connectionOf(UserConnection, services.cursors, page, (r) => User.from(r, baseUrl));
  }

  @Allow('users.read')
  @Query(() => User, { nullable: true, description: 'Admins: any user of the account; others: themselves (anyone else is null)' })
  async user(@Arg('id', () => ID) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<User | null> {
    const found = await services.users.find(viewer!, id);
    return found && User.from(found, baseUrl);
  }

  @Allow('users.write')
  @Mutation(() => User)
  async createUser(@Arg('input', () => CreateUserInput) input: CreateUserInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<User> {
    return User.from(await services.users.create(viewer!, input), baseUrl);
  }

  @Allow('users.write')
  @Mutation(() => User, { description: 'active: false deactivates the user and revokes their tokens and grants' })
  async updateUser(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateUserInput) input: UpdateUserInput,
    @Ctx() { viewer, services, baseUrl }: GraphQLContext,
  ): Promise<User> {
    return User.from(await services.users.update(viewer!, id, input), baseUrl);
  }

  @Allow('users.write')
  @Mutation(() => User, { description: "Zendesk's delete: deactivates the user (returned with active false) and revokes their tokens and grants" })
  async deleteUser(@Arg('id', () => ID) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<User> {
    return User.from(await services.users.delete(viewer!, id), baseUrl);
  }

  @Allow('users.password')
  @Mutation(() => Boolean, { description: 'Your own password needs previousPassword; admins set the password of another user of the account without it' })
  async setUserPassword(
    @Arg('id', () => ID) id: string,
    @Arg('password', () => String, { nullable: true }) password: string | null,
    @Arg('previousPassword', () => String, { nullable: true }) previousPassword: string | null,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<boolean> {
    await services.users.setPassword(viewer!, id, password ?? undefined, previousPassword ?? undefined);
    return true;
  }
}
