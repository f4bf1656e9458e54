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
import { isoSeconds, pickFields, unwrap } from './body';
import { offsetFields, offsetVariables } from './pagination';

/** Zendesk's group JSON (API.md "Groups"). */
export function serializeGroup(g: RestGroupFragment) {
  return {
    id: Number(g.id),
    url: g.url,
    name: g.name,
    description: g.description,
    created_at: isoSeconds(g.createdAt),
    updated_at: isoSeconds(g.updatedAt),
  };
}

/** {"group": {...}} (or flat) */
const GROUP_FIELDS = {
  name: { kind: 'string', label: 'Name', to: 'name' },
  description: { kind: 'string', label: 'Description', to: 'description' },
} as const;

export const groupRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/groups'],
    document: RestListGroupsDocument,
    variables: offsetVariables,
    respond: (data, req) => ({ status: 200, body: { groups: data.groups.map(serializeGroup), ...offsetFields(offsetVariables(req), data.groupCount, req) } }),
  }),
  defineRoute({
    method: 'GET',
    paths: ['/groups/:id'],
    document: RestShowGroupDocument,
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
    variables: (req) => ({ input: pickFields(unwrap(req.body, 'group'), GROUP_FIELDS) }),
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
    variables: (req) => ({ id: req.params.id, input: pickFields(unwrap(req.body, 'group'), GROUP_FIELDS) }),
    respond: (data) => ({ status: 200, body: { group: serializeGroup(data.updateGroup) } }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: ['/groups/:id'],
    document: RestDeleteGroupDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
