import { ArgsType, Field, ID, InputType, ObjectType } from 'type-graphql';
import type { GroupMembershipRecord } from '../../domain/voice/group-membership.service';
import { OffsetPageArgs } from '../connection';

@ObjectType({ simpleResolvers: true, description: "An agent's membership in a group: the group routes to the agent (Zendesk's group membership)" })
export class GroupMembership {
  @Field(() => ID, { description: "The membership's id" }) id!: string;
  @Field(() => ID, { description: 'The member: an agent or admin of the account' }) userId!: string;
  @Field(() => ID, { description: 'The group' }) groupId!: string;
  @Field({ description: "Whether this is the user's default group: always false here (Zendesk's field; no default group is kept)" }) default!: boolean;
  @Field({ description: 'When the user was added to the group (ISO 8601, UTC)' }) createdAt!: Date;
  @Field({ description: 'When the membership last changed: its creation, as a membership does not change' }) updatedAt!: Date;
  @Field({ description: 'REST URL of this record' }) url!: string;

  static from(r: GroupMembershipRecord, baseUrl: string): GroupMembership {
    return Object.assign(new GroupMembership(), {
      id: String(r.id), userId: String(r.userId), groupId: String(r.groupId), default: false, createdAt: r.createdAt, updatedAt: r.updatedAt,
      url: `${baseUrl}/api/v2/group_memberships/${r.id}.json`,
    });
  }
}

@InputType({ description: 'A new group membership: a user and a group of the account' })
export class GroupMembershipInput {
  @Field(() => ID, { nullable: true, description: 'Required: an active agent or admin of the account' }) userId?: string | null;
  @Field(() => ID, { nullable: true, description: 'Required: a group of the account' }) groupId?: string | null;
}

/** Which memberships: the account's, one group's, one user's, or one pair's. */
@ArgsType()
export class GroupMembershipFilterArgs {
  @Field(() => ID, { nullable: true, description: "Only this group's memberships; NOT_FOUND when the account has no such group" }) groupId?: string | null;
  @Field(() => ID, { nullable: true, description: "Only this user's memberships; NOT_FOUND when the account has no such user" }) userId?: string | null;
}

/** The filter and one offset page. */
@ArgsType()
export class GroupMembershipsArgs extends OffsetPageArgs {
  @Field(() => ID, { nullable: true, description: "Only this group's memberships; NOT_FOUND when the account has no such group" }) groupId?: string | null;
  @Field(() => ID, { nullable: true, description: "Only this user's memberships; NOT_FOUND when the account has no such user" }) userId?: string | null;
}
