import { Type } from 'typebox';
import {
  RestCreateGroupMembershipDocument,
  RestDeleteGroupMembershipDocument,
  RestListGroupMembershipsDocument,
  RestShowGroupMembershipDocument,
  type RestGroupMembershipFragment,
} from '../generated/graphql';
import type { AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { createRoute, deleteRoute, offsetListRoute, showRoute } from './record-routes';
import { BodyField, Keyed, mustBe, PositiveInteger, Timestamp, unwrap, wrappedBody } from './schemas';

/** Zendesk's group membership JSON (docs/api.md, "Group memberships"). */
const GroupMembershipJson = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String({ format: 'uri' }),
    user_id: Type.Integer({ description: 'The member: an agent or admin of the account' }),
    group_id: Type.Integer(),
    default: Type.Boolean({ description: 'Always false: no default group is kept' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    additionalProperties: false,
    title: 'GroupMembership',
    examples: [{
      id: 4, url: 'https://help.example.com/api/v2/group_memberships/4.json', user_id: 12, group_id: 3, default: false,
      created_at: '2026-11-21T10:29:59Z', updated_at: '2026-11-21T10:29:59Z',
    }],
  },
);
const OneGroupMembership = Keyed('group_membership', GroupMembershipJson);

/** Zendesk's group membership JSON (docs/api.md, "Group memberships"). */
function serializeGroupMembership(m: RestGroupMembershipFragment) {
  return {
    id: Number(m.id),
    url: m.url,
    user_id: Number(m.userId),
    group_id: Number(m.groupId),
    default: m.default,
    created_at: isoSeconds(m.createdAt)!,
    updated_at: isoSeconds(m.updatedAt)!,
  };
}

/** {"group_membership": {...}} (or flat) */
const GROUP_MEMBERSHIP_FIELDS = {
  user_id: BodyField(PositiveInteger, mustBe('User', 'positiveInteger'), 'Required: an active agent or admin of the account'),
  group_id: BodyField(PositiveInteger, mustBe('Group', 'positiveInteger'), 'Required: a group of the account'),
};

const TAGS = ['Group memberships'];

const PATH = '/group_memberships';
const LIST = {
  document: RestListGroupMembershipsDocument,
  key: 'group_memberships',
  record: GroupMembershipJson,
  records: (data: { groupMemberships: RestGroupMembershipFragment[] }) => data.groupMemberships.map(serializeGroupMembership),
  count: (data: { groupMembershipCount: number }) => data.groupMembershipCount,
};
const oneGroupMembership = (m: RestGroupMembershipFragment) => ({ group_membership: serializeGroupMembership(m) });

export const groupMembershipRoutes: AnyRestRoute[] = [
  offsetListRoute({
    ...LIST,
    path: PATH,
    what: 'group memberships',
    schema: {
      operationId: 'listGroupMemberships', summary: 'List group memberships', tags: TAGS,
      description: "The account's group memberships, id ascending, in offset pages (page, per_page). Agents and admins.",
    },
  }),
  offsetListRoute({
    ...LIST,
    path: '/groups/:id/memberships',
    what: 'memberships of the group',
    parent: (id) => ({ groupId: id }),
    schema: {
      operationId: 'listGroupMembershipsOfGroup', summary: "List a group's memberships", tags: TAGS,
      description: "The group's memberships, id ascending, in offset pages (page, per_page); 404 when the account has no such group. Agents and admins.",
    },
  }),
  offsetListRoute({
    ...LIST,
    path: '/users/:id/group_memberships',
    what: "memberships of the user",
    parent: (id) => ({ userId: id }),
    schema: {
      operationId: 'listGroupMembershipsOfUser', summary: "List a user's group memberships", tags: TAGS,
      description: "The user's group memberships, id ascending, in offset pages (page, per_page); 404 when the account has no such user. Agents and admins.",
    },
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowGroupMembershipDocument,
    schema: { operationId: 'showGroupMembership', summary: 'Show a group membership', tags: TAGS, description: 'Agents and admins.' },
    answer: { schema: OneGroupMembership, description: 'The group membership' },
    body: (data) => data.groupMembership && oneGroupMembership(data.groupMembership),
  }),
  createRoute({
    path: PATH,
    document: RestCreateGroupMembershipDocument,
    schema: {
      operationId: 'createGroupMembership', summary: 'Create a group membership', tags: TAGS, body: wrappedBody('group_membership', GROUP_MEMBERSHIP_FIELDS),
      description: 'Adds an active agent or admin to a group; 422 when the user is a member of the group already. Admins.',
    },
    answer: { schema: OneGroupMembership, description: 'The group membership' },
    variables: (req) => {
      const { user_id: userId, group_id: groupId } = unwrap(req.body, 'group_membership');
      return { input: { userId: userId == null ? userId : String(userId), groupId: groupId == null ? groupId : String(groupId) } };
    },
    created: (data) => data.createGroupMembership,
    body: (data) => oneGroupMembership(data.createGroupMembership),
  }),
  deleteRoute({
    path: `${PATH}/:id`,
    document: RestDeleteGroupMembershipDocument,
    schema: { operationId: 'deleteGroupMembership', summary: 'Delete a group membership', tags: TAGS, description: 'Removes the user from the group; both stay. Admins.' },
    done: 'Deleted',
  }),
];
