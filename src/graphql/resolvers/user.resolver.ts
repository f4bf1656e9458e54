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
  @Query(() => UserConnection, { description: 'Users of the account, id ascending: cursor (first/after, last/before) or offset (page/perPage) pages' })
  async users(@Args() args: UsersArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<UserConnection> {
    const page = await readPage(services.cursors, pageRequest(args), services.users.pages(viewer!, (args.role ?? undefined) as Role | undefined));
    return connectionOf(UserConnection, services.cursors, page, (r) => User.from(r, baseUrl));
  }

  @Allow('users.read')
  @Query(() => User, { nullable: true, description: 'A user by id: admins see any user of the account, others themselves; null otherwise' })
  async user(@Arg('id', () => ID, { description: "The user's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<User | null> {
    const found = await services.users.find(viewer!, id);
    return found && User.from(found, baseUrl);
  }

  @Allow('users.write')
  @Mutation(() => User, { description: 'Creates a user of the account and returns it' })
  async createUser(@Arg('input', () => CreateUserInput, { description: 'The new user' }) input: CreateUserInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<User> {
    return User.from(await services.users.create(viewer!, input), baseUrl);
  }

  @Allow('users.write')
  @Mutation(() => User, { description: 'Changes a user (omitted fields keep their value) and returns it; active: false deactivates the user and revokes their tokens and grants' })
  async updateUser(
    @Arg('id', () => ID, { description: "The user's id" }) id: string,
    @Arg('input', () => UpdateUserInput, { description: 'The fields to change' }) input: UpdateUserInput,
    @Ctx() { viewer, services, baseUrl }: GraphQLContext,
  ): Promise<User> {
    return User.from(await services.users.update(viewer!, id, input), baseUrl);
  }

  @Allow('users.write')
  @Mutation(() => User, { description: "Zendesk's delete: deactivates the user (returned with active false) and revokes their tokens and grants" })
  async deleteUser(@Arg('id', () => ID, { description: "The user's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<User> {
    return User.from(await services.users.delete(viewer!, id), baseUrl);
  }

  @Allow('users.password')
  @Mutation(() => Boolean, { description: 'Sets a password and returns true. Your own needs previousPassword; admins set the password of another user of the account without it' })
  async setUserPassword(
    @Arg('id', () => ID, { description: "The user's id" }) id: string,
    @Arg('password', () => String, { nullable: true, description: 'The new password, 8..1024 characters (required)' }) password: string | null,
    @Arg('previousPassword', () => String, { nullable: true, description: 'Your current password: required to change your own' }) previousPassword: string | null,
    @Ctx() { viewer, services }: GraphQLContext,
  ): Promise<boolean> {
    await services.users.setPassword(viewer!, id, password ?? undefined, previousPassword ?? undefined);
    return true;
  }
}
