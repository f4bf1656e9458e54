import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { pageRequest } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { Group, GroupInput } from '../types/directory.types';

/** Offset page of a list: page from 1, perPage 1..100 (clamped). */
export function offsetPage(page: number | null, perPage: number | null): { page: number; perPage: number } {
  const request = pageRequest({ page: page ?? 1, perPage: perPage ?? 100 });
  return request.mode === 'offset' ? request : { page: 1, perPage: 100 };
}

/** Groups (docs/api.md, "Groups"): agents and admins read, admins write. */
@Resolver(() => Group)
export class GroupResolver {
  @Allow('directory.read')
  @Query(() => [Group], { description: 'Groups of the account (agents and admins), id ascending, one page (perPage 1..100)' })
  async groups(
    @Arg('page', () => Int, { nullable: true, defaultValue: 1 }) page: number | null,
    @Arg('perPage', () => Int, { nullable: true, defaultValue: 100 }) perPage: number | null,
    @Ctx() { viewer, services, baseUrl }: GraphQLContext,
  ): Promise<Group[]> {
    return (await services.groups.list(viewer!, offsetPage(page, perPage))).map((r) => Group.from(r, baseUrl));
  }

  @Allow('directory.read')
  @Query(() => Int, { description: 'How many groups the account has' })
  groupCount(@Ctx() { viewer, services }: GraphQLContext): Promise<number> {
    return services.groups.count(viewer!);
  }

  @Allow('directory.read')
  @Query(() => Group, { nullable: true })
  async group(@Arg('id', () => ID) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Group | null> {
    const found = await services.groups.find(viewer!, id);
    return found && Group.from(found, baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Group)
  async createGroup(@Arg('input', () => GroupInput) input: GroupInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Group> {
    return Group.from(await services.groups.create(viewer!, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Group)
  async updateGroup(@Arg('id', () => ID) id: string, @Arg('input', () => GroupInput) input: GroupInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Group> {
    return Group.from(await services.groups.update(viewer!, id, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Boolean, { description: 'Deletes the group; callback requests keep the group ids they were created with' })
  async deleteGroup(@Arg('id', () => ID) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.groups.delete(viewer!, id);
    return true;
  }
}
