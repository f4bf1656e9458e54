import { Arg, Args, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { offsetPage } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import { OffsetPageArgs } from '../connection';
import type { GraphQLContext } from '../context';
import { Group, GroupInput } from '../types/directory.types';

/** Groups (docs/api.md, "Groups"): agents and admins read, admins write. */
@Resolver(() => Group)
export class GroupResolver {
  @Allow('directory.read')
  @Query(() => [Group], { description: 'Groups of the account, id ascending, one page (perPage 1..100)' })
  async groups(@Args() args: OffsetPageArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Group[]> {
    return (await services.groups.list(viewer!, offsetPage(args))).map((r) => Group.from(r, baseUrl));
  }

  @Allow('directory.read')
  @Query(() => Int, { description: 'How many groups the account has' })
  groupCount(@Ctx() { viewer, services }: GraphQLContext): Promise<number> {
    return services.groups.count(viewer!);
  }

  @Allow('directory.read')
  @Query(() => Group, { nullable: true, description: 'A group of the account; null when there is none with this id' })
  async group(@Arg('id', () => ID, { description: "The group's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Group | null> {
    const found = await services.groups.find(viewer!, id);
    return found && Group.from(found, baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Group, { description: 'Creates a group and returns it' })
  async createGroup(@Arg('input', () => GroupInput, { description: 'The new group' }) input: GroupInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Group> {
    return Group.from(await services.groups.create(viewer!, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Group, { description: 'Changes a group (omitted fields keep their value) and returns it' })
  async updateGroup(@Arg('id', () => ID, { description: "The group's id" }) id: string, @Arg('input', () => GroupInput, { description: 'The fields to change' }) input: GroupInput, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<Group> {
    return Group.from(await services.groups.update(viewer!, id, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Boolean, { description: 'Deletes the group and returns true; callback requests keep the group ids they were created with' })
  async deleteGroup(@Arg('id', () => ID, { description: "The group's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.groups.delete(viewer!, id);
    return true;
  }
}
