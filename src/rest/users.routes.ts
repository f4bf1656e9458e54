import {
  RestCreateUserDocument,
  RestDeleteUserDocument,
  RestListUsersDocument,
  RestSetUserPasswordDocument,
  RestShowMeDocument,
  RestShowUserDocument,
  RestUpdateUserDocument,
  type RestUserFragment,
  type UserRole,
} from '../generated/graphql';
import { BadRequestError, NotFoundError } from '../domain/errors';
import { defineRoute, type AnyRestRoute, type RestRequest } from './adapter';
import { isoSeconds, pickFields, unwrap } from './body';
import { pageFields, pageVariables } from './pagination';
import { queryParam } from './query';

/** Zendesk's user JSON (API.md "Users"). */
export function serializeUser(u: RestUserFragment) {
  return {
    id: Number(u.id),
    url: u.url,
    name: u.name,
    email: u.email,
    role: u.role.toLowerCase(),
    active: u.active,
    created_at: isoSeconds(u.createdAt),
    updated_at: isoSeconds(u.updatedAt),
  };
}

const ROLE = { admin: 'ADMIN', agent: 'AGENT', end_user: 'END_USER' } as const;
const role = { kind: 'enum', label: 'Role', values: ROLE, message: 'must be one of admin, agent, end_user' } as const;

/** {"user": {...}} (or flat); unknown and read-only fields are ignored. */
const CREATE_FIELDS = {
  name: { kind: 'string', label: 'Name', to: 'name' },
  email: { kind: 'string', label: 'Email', to: 'email' },
  role: { ...role, to: 'role' },
  password: { kind: 'string', label: 'Password', to: 'password' },
} as const;
const UPDATE_FIELDS = {
  name: { kind: 'string', label: 'Name', to: 'name' },
  email: { kind: 'string', label: 'Email', to: 'email' },
  role: { ...role, to: 'role' },
  active: { kind: 'boolean', label: 'Active', to: 'active' },
} as const;
/** {"password": "...", "previous_password": "..."} */
const PASSWORD_FIELDS = {
  password: { kind: 'string', label: 'Password', to: 'password' },
  previous_password: { kind: 'string', label: 'Previous password', to: 'previousPassword' },
} as const;

/** ?role=admin|agent|end_user; anything else is 400. */
function roleParam(req: RestRequest): UserRole | undefined {
  const raw = queryParam(req.query, 'role');
  if (raw === undefined || raw === '') return undefined;
  if (!Object.prototype.hasOwnProperty.call(ROLE, raw)) throw new BadRequestError('role must be one of admin, agent, end_user');
  return ROLE[raw as keyof typeof ROLE];
}

const listVariables = (req: RestRequest) => ({ role: roleParam(req), ...pageVariables(req) });

const setPassword = (method: 'PUT' | 'POST') =>
  defineRoute({
    method,
    paths: ['/users/:id/password'],
    document: RestSetUserPasswordDocument,
    variables: (req) => ({ id: req.params.id, ...pickFields(unwrap(req.body, 'user'), PASSWORD_FIELDS) }),
    respond: () => ({ status: 200, body: {} }),
  });

export const userRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/users'],
    document: RestListUsersDocument,
    variables: listVariables,
    respond: (data, req) => {
      const { edges, pageInfo, totalCount } = data.users;
      return { status: 200, body: { users: edges.map((e) => serializeUser(e.node)), ...pageFields(listVariables(req), pageInfo, totalCount, req) } };
    },
  }),
  defineRoute({
    method: 'GET',
    paths: ['/users/me'],
    document: RestShowMeDocument,
    variables: () => ({}),
    respond: (data) => ({ status: 200, body: { user: serializeUser(data.me) } }),
  }),
  defineRoute({
    method: 'GET',
    paths: ['/users/:id'],
    document: RestShowUserDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => {
      if (!data.user) throw new NotFoundError();
      return { status: 200, body: { user: serializeUser(data.user) } };
    },
  }),
  defineRoute({
    method: 'POST',
    paths: ['/users'],
    document: RestCreateUserDocument,
    variables: (req) => ({ input: pickFields(unwrap(req.body, 'user'), CREATE_FIELDS) }),
    respond: (data, req) => ({
      status: 201,
      body: { user: serializeUser(data.createUser) },
      headers: { location: `${req.baseUrl}/api/v2/users/${data.createUser.id}.json` },
    }),
  }),
  defineRoute({
    method: 'PUT',
    paths: ['/users/:id'],
    document: RestUpdateUserDocument,
    variables: (req) => ({ id: req.params.id, input: pickFields(unwrap(req.body, 'user'), UPDATE_FIELDS) }),
    respond: (data) => ({ status: 200, body: { user: serializeUser(data.updateUser) } }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: ['/users/:id'],
    document: RestDeleteUserDocument,
    variables: (req) => ({ id: req.params.id }),
    // Zendesk's soft delete: the user, deactivated
    respond: (data) => ({ status: 200, body: { user: serializeUser(data.deleteUser) } }),
  }),
  setPassword('PUT'),
  // Zendesk's admin "set password" is a POST
  setPassword('POST'),
];
