import { Type } from 'typebox';
import {
  RestCreateGroupDocument,
  RestDeleteGroupDocument,
  RestListGroupsDocument,
  RestShowGroupDocument,
  RestUpdateGroupDocument,
  type RestGroupFragment,
} from '../generated/graphql';
import type { AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { createRoute, deleteRoute, offsetListRoute, showRoute, updateRoute } from './record-routes';
import { BodyField, Keyed, mustBe, NullableTimestamp, Timestamp, unwrap, wrappedBody, type Fields } from './schemas';

/** Zendesk's group JSON (docs/api.md, "Groups"). */
const GroupJson = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String({ format: 'uri' }),
    name: Type.String(),
    description: Type.String({ description: '"" when there is none' }),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  {
    additionalProperties: false,
    title: 'Group',
    examples: [{ id: 3, url: 'https://help.example.com/api/v2/groups/3.json', name: 'Support', description: 'First line', created_at: '2026-11-21T10:29:59Z', updated_at: null }],
  },
);
const OneGroup = Keyed('group', GroupJson);

/** Zendesk's group JSON (docs/api.md, "Groups"). */
function serializeGroup(g: RestGroupFragment) {
  return {
    id: Number(g.id),
    url: g.url,
    name: g.name,
    description: g.description,
    created_at: isoSeconds(g.createdAt)!,
    updated_at: isoSeconds(g.updatedAt),
  };
}

/** {"group": {...}} (or flat) */
const GROUP_FIELDS = {
  name: BodyField(Type.String(), mustBe('Name', 'string'), 'Required on create: 1..255 characters after trimming'),
  description: BodyField(Type.String(), mustBe('Description', 'string'), 'At most 1000 characters; null or "" for none'),
};
const GroupBody = wrappedBody('group', GROUP_FIELDS);

/** The GraphQL input of a body: its known fields (an absent one is undefined, which the executor leaves out: a partial update keeps it). */
const groupInput = ({ name, description }: Fields<typeof GROUP_FIELDS>) => ({ name, description });

const TAGS = ['Groups'];


const PATH = '/groups';
const ONE_GROUP = (description: string) => ({ schema: OneGroup, description });
const oneGroup = (g: RestGroupFragment) => ({ group: serializeGroup(g) });

export const groupRoutes: AnyRestRoute[] = [
  offsetListRoute({
    path: PATH,
    document: RestListGroupsDocument,
    schema: { operationId: 'listGroups', summary: 'List groups', tags: TAGS, description: "The account's groups, id ascending, in offset pages (page, per_page). Agents and admins." },
    key: 'groups',
    what: 'groups',
    record: GroupJson,
    records: (data) => data.groups.map(serializeGroup),
    count: (data) => data.groupCount,
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowGroupDocument,
    schema: { operationId: 'showGroup', summary: 'Show a group', tags: TAGS, description: 'Agents and admins.' },
    answer: ONE_GROUP('The group'),
    body: (data) => data.group && oneGroup(data.group),
  }),
  createRoute({
    path: PATH,
    document: RestCreateGroupDocument,
    schema: { operationId: 'createGroup', summary: 'Create a group', tags: TAGS, description: 'Names are trimmed. Admins.', body: GroupBody },
    answer: ONE_GROUP('The group'),
    variables: (req) => ({ input: groupInput(unwrap(req.body, 'group')) }),
    created: (data) => data.createGroup,
    body: (data) => oneGroup(data.createGroup),
  }),
  updateRoute({
    path: `${PATH}/:id`,
    document: RestUpdateGroupDocument,
    schema: {
      operationId: 'updateGroup', summary: 'Update a group', tags: TAGS, body: GroupBody,
      description: 'Partial: omitted fields keep their value; a field that is present must be valid. Admins.',
    },
    answer: ONE_GROUP('The group, updated_at set'),
    variables: (req) => ({ id: req.params.id, input: groupInput(unwrap(req.body, 'group')) }),
    body: (data) => oneGroup(data.updateGroup),
  }),
  deleteRoute({
    path: `${PATH}/:id`,
    document: RestDeleteGroupDocument,
    schema: { operationId: 'deleteGroup', summary: 'Delete a group', tags: TAGS, description: 'Callback requests keep the group ids they asked for. Admins.' },
    done: 'Deleted',
  }),
];
