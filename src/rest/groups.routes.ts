import { Type } from 'typebox';
import {
  RestCreateGroupDocument,
  RestDeleteGroupDocument,
  RestListGroupsDocument,
  RestShowGroupDocument,
  RestUpdateGroupDocument,
  type RestGroupFragment,
} from '../generated/graphql';
import { NotFoundError } from '../domain/errors';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { offsetListPage, offsetListVariables } from './query';
import {
  answer,
  BodyField,
  errorResponses,
  HEADERS,
  IdParams,
  IgnoredBody,
  mustBe,
  NoContent,
  NullableTimestamp,
  OffsetPageQuery,
  offsetListFields,
  Timestamp,
  unwrap,
  wrappedBody,
  type Fields,
} from './schemas';

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
const OneGroup = Type.Object({ group: GroupJson }, { additionalProperties: false });

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

const LIST_SCHEMA = {
  operationId: 'listGroups', summary: 'List groups', tags: TAGS,
  description: "The account's groups, id ascending, in offset pages (page, per_page). Agents and admins.",
  querystring: OffsetPageQuery,
  response: {
    200: answer(
      Type.Object({
        groups: Type.Array(GroupJson),
        ...offsetListFields('groups'),
      }, { additionalProperties: false }),
      'A page of groups',
    ),
    ...errorResponses(),
  },
};

export const groupRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/groups'],
    document: RestListGroupsDocument,
    schema: LIST_SCHEMA,
    variables: (req) => offsetListVariables(req.query),
    respond: (data, req) => ({
      status: 200,
      body: { groups: data.groups.map(serializeGroup), ...offsetListPage(req.query, data.groupCount, req.baseUrl, req.url) },
    }),
  }),
  defineRoute({
    method: 'GET',
    paths: ['/groups/:id'],
    document: RestShowGroupDocument,
    schema: {
      operationId: 'showGroup', summary: 'Show a group', tags: TAGS,
      description: 'Agents and admins.',
      params: IdParams,
      response: { 200: answer(OneGroup, 'The group'), ...errorResponses({ id: true }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => {
      if (!data.group) throw new NotFoundError();
      return { status: 200, body: { group: serializeGroup(data.group) } };
    },
  }),
  defineRoute({
    method: 'POST',
    paths: ['/groups'],
    document: RestCreateGroupDocument,
    schema: {
      operationId: 'createGroup', summary: 'Create a group', tags: TAGS,
      description: 'Names are trimmed. Admins.',
      body: GroupBody,
      response: { 201: answer(OneGroup, 'The group', HEADERS.location), ...errorResponses({ body: 'fields' }) },
    },
    variables: (req) => ({ input: groupInput(unwrap(req.body, 'group')) }),
    respond: (data, req) => ({
      status: 201,
      body: { group: serializeGroup(data.createGroup) },
      headers: { location: `${req.baseUrl}/api/v2/groups/${data.createGroup.id}.json` },
    }),
  }),
  defineRoute({
    method: 'PUT',
    paths: ['/groups/:id'],
    document: RestUpdateGroupDocument,
    schema: {
      operationId: 'updateGroup', summary: 'Update a group', tags: TAGS,
      description: 'Partial: omitted fields keep their value; a field that is present must be valid. Admins.',
      params: IdParams,
      body: GroupBody,
      response: { 200: answer(OneGroup, 'The group, updated_at set'), ...errorResponses({ id: true, body: 'fields' }) },
    },
    variables: (req) => ({ id: req.params.id, input: groupInput(unwrap(req.body, 'group')) }),
    respond: (data) => ({ status: 200, body: { group: serializeGroup(data.updateGroup) } }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: ['/groups/:id'],
    document: RestDeleteGroupDocument,
    schema: {
      operationId: 'deleteGroup', summary: 'Delete a group', tags: TAGS,
      description: 'Callback requests keep the group ids they asked for. Admins.',
      params: IdParams,
      body: IgnoredBody,
      response: { 204: NoContent('Deleted'), ...errorResponses({ id: true, body: 'ignored' }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
