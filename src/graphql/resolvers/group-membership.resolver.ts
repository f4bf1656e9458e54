import { Arg, Args, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { offsetPage } from '../../domain/pagination';
import { Allow } from '../auth-checker';
import type { GraphQLContext } from '../context';
import { GroupMembership, GroupMembershipFilterArgs, GroupMembershipInput, GroupMembershipsArgs } from '../types/group-membership.types';

/** Group memberships (docs/api.md, "Group memberships"): agents and admins read, admins write. */
@Resolver(() => GroupMembership)
export class GroupMembershipResolver {
  @Allow('directory.read')
  @Query(() => [GroupMembership], { description: "Group memberships of the account (or of one group, or one user), id ascending, one page (perPage 1..100); NOT_FOUND when the account has no such group or user" })
  async groupMemberships(@Args() args: GroupMembershipsArgs, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<GroupMembership[]> {
    const filter = { groupId: args.groupId, userId: args.userId };
    return (await services.groupMemberships.list(viewer!, filter, offsetPage(args))).map((r) => GroupMembership.from(r, baseUrl));
  }

  @Allow('directory.read')
  @Query(() => Int, { description: 'How many group memberships the account (or the group, or the user) has; NOT_FOUND when the account has no such group or user' })
  groupMembershipCount(@Args() args: GroupMembershipFilterArgs, @Ctx() { viewer, services }: GraphQLContext): Promise<number> {
    return services.groupMemberships.count(viewer!, { groupId: args.groupId, userId: args.userId });
  }

  @Allow('directory.read')
  @Query(() => GroupMembership, { nullable: true, description: 'A group membership of the account; null when there is none with this id' })
  async groupMembership(@Arg('id', () => ID, { description: "The membership's id" }) id: string, @Ctx() { viewer, services, baseUrl }: GraphQLContext): Promise<GroupMembership | null> {
    const found = await services.groupMemberships.find(viewer!, id);
    return found && GroupMembership.from(found, baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => GroupMembership, { description: 'Adds an active agent or admin to a group and returns the membership; BAD_USER_INPUT when the user is a member already' })
  async createGroupMembership(
    @Arg('input', () => GroupMembershipInput, { description: 'The user and the group' }) input: GroupMembershipInput,
    @Ctx() { viewer, services, baseUrl }: GraphQLContext,
  ): Promise<GroupMembership> {
    return GroupMembership.from(await services.groupMemberships.create(viewer!, input), baseUrl);
  }

  @Allow('directory.write')
  @Mutation(() => Boolean, { description: 'Removes the user from the group (both stay) and returns true' })
  async deleteGroupMembership(@Arg('id', () => ID, { description: "The membership's id" }) id: string, @Ctx() { viewer, services }: GraphQLContext): Promise<boolean> {
    await services.groupMemberships.delete(viewer!, id);
    return true;
  }
}
