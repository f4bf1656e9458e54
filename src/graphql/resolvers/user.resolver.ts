import { Arg, Args, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageRequest } from '../../domain/pagination';
import type { Role } from '../../domain/auth/viewer';
import type { UserRecord } from '../../domain/directory/user.service';
import { Allow } from '../auth-checker';
import { pageOf } from '../connection';
import type { GraphQLContext } from '../context';
import { CreateUserInput, UpdateUserInput, User, UserConnection, UsersArgs } from '../types/directory.types';

const MAX_ID = 9223372036854775807n;

/** Users (docs/api.md, "Users"): admins list and manage the account's; anyone reads themselves and sets their own password. */
@Resolver(() => User)
export class UserResolver {
  @Allow('users.list')
  @Query(() => UserConnection, { description: 'Users of the account (admins), id ascending: cursor (first/after, last/before) or offset (page/perPage)' })
  async users(@Args() args: UsersArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<UserConnection> {
    const users = services.users;
    const role = (args.role ?? undefined) as Role | undefined;
    const count = () => users.count(viewer!, role);
    const connection = (items: UserRecord[], hasNextPage: boolean, hasPreviousPage: boolean) => {
      const page = pageOf(services.cursors, items, (r) => User.from(r, baseUrl), { hasNextPage, hasPreviousPage });
      return Object.assign(new UserConnection(), { ...page, count });
    };
    const request = pageRequest(args);
    if (request.mode === 'offset') {
      const [items, total] = await Promise.all([users.listOffset(viewer!, role, request), count()]);
      return Object.assign(connection(items, request.page * request.perPage < total, request.page > 1), { count: async () => total });
    }
    const after = request.after === undefined ? undefined : services.cursors.decode(request.after);
    // backward without `before`: the last N from the end
    const before = request.before !== undefined ? services.cursors.decode(request.before) : request.backward ? MAX_ID : undefined;
    const page = await users.listKeyset(viewer!, role, { size: request.size, after, before });
    return connection(page.items, page.hasNextPage && !(request.backward && request.before === undefined), page.hasPreviousPage);
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

@Resolver(() => UserConnection)
export class UserConnectionResolver {
  @FieldResolver(() => Int)
  totalCount(@Root() connection: UserConnection): Promise<number> {
    return connection.count();
  }
}
