import { Type } from 'typebox';
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
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { pageFields, pageVariables } from './pagination';
import { createRoute, getRoute, showRoute, updateRoute } from './record-routes';
import {
  answer,
  BodyField,
  errorResponses,
  ERRORS,
  IdParams,
  IgnoredBody,
  Keyed,
  INVALID,
  mustBe,
  NullableTimestamp,
  PageFields,
  PageQuery,
  StringEnum,
  Timestamp,
  unwrap,
  wrappedBody,
  type Fields,
} from './schemas';

const ROLES = ['admin', 'agent', 'end_user'] as const;
type Role = (typeof ROLES)[number];
const ROLE: Record<Role, UserRole> = { admin: 'ADMIN', agent: 'AGENT', end_user: 'END_USER' };
const ROLE_TEXT = 'must be one of admin, agent, end_user';

const USER_EXAMPLE = {
  id: 35436, url: 'https://help.example.com/api/v2/users/35436.json', name: 'Johnny Agent', email: 'johnny@example.com',
  role: 'agent', active: true, created_at: '2026-11-21T10:29:59Z', updated_at: '2026-11-21T10:29:59Z',
};

/** Zendesk's user JSON (docs/api.md, "Users"). */
const UserJson = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String({ format: 'uri' }),
    name: Type.String(),
    email: Type.String({ description: 'Unique in the account (case-insensitive)' }),
    role: StringEnum(ROLES),
    active: Type.Boolean({ description: 'false: deactivated (soft-deleted), cannot sign in' }),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
  },
  { additionalProperties: false, title: 'User', examples: [USER_EXAMPLE] },
);
const OneUser = Keyed('user', UserJson);

/** Zendesk's user JSON (docs/api.md, "Users"). */
function serializeUser(u: RestUserFragment) {
  return {
    id: Number(u.id),
    url: u.url,
    name: u.name,
    email: u.email,
    role: u.role.toLowerCase() as Role,
    active: u.active,
    created_at: isoSeconds(u.createdAt)!,
    updated_at: isoSeconds(u.updatedAt),
  };
}

const NAME = BodyField(Type.String(), mustBe('Name', 'string'), 'Required on create: 1..255 characters after trimming');
const EMAIL = BodyField(Type.String(), mustBe('Email', 'string'), 'Required on create: unique in the account (case-insensitive)');
const ROLE_FIELD = BodyField(StringEnum(ROLES), `Role: ${ROLE_TEXT}`, 'admin, agent or end_user (default)');

/** {"user": {...}} (or flat); unknown and read-only fields are ignored. */
const CREATE_FIELDS = {
  name: NAME,
  email: EMAIL,
  role: ROLE_FIELD,
  password: BodyField(Type.String(), mustBe('Password', 'string'), '8..1024 characters; without one the user cannot sign in with Basic until one is set'),
};
const UPDATE_FIELDS = {
  name: NAME,
  email: EMAIL,
  role: ROLE_FIELD,
  active: BodyField(Type.Boolean(), mustBe('Active', 'boolean'), 'false deactivates the user and revokes their tokens'),
};
/** {"password": "...", "previous_password": "..."} */
const PASSWORD_FIELDS = {
  password: BodyField(Type.String(), mustBe('Password', 'string'), 'Required: the new password, 8..1024 characters'),
  previous_password: BodyField(Type.String(), mustBe('Previous password', 'string'), 'Required when changing your own password'),
};

// The GraphQL input of a body: its known fields (unknown ones are dropped). An absent
// field is undefined, which the executor leaves out (a partial update keeps it).
const createInput = ({ name, email, role, password }: Fields<typeof CREATE_FIELDS>) => ({ name, email, role: role && ROLE[role], password });
const updateInput = ({ name, email, role, active }: Fields<typeof UPDATE_FIELDS>) => ({ name, email, role: role && ROLE[role], active });

const TAGS = ['Users'];

const ListQuery = Type.Object({
  role: Type.Optional(StringEnum([...ROLES, ''], { [INVALID]: `role ${ROLE_TEXT}`, description: 'Only users of this role (empty: every role)' })),
  ...PageQuery,
});

const LIST_SCHEMA = {
  operationId: 'listUsers', summary: 'List users', tags: TAGS,
  description: "The account's users, id ascending, optionally of one role. Cursor pagination with page[size], page[after] or page[before]; offset pagination otherwise. Admins.",
  querystring: ListQuery,
  response: {
    200: answer(
      Type.Object({ users: Type.Array(UserJson), ...PageFields }, {
        additionalProperties: false,
        examples: [{ users: [USER_EXAMPLE], next_page: null, previous_page: null, count: 1 }],
      }),
      'A page of users: meta and links in cursor mode, next_page, previous_page and count in offset mode',
    ),
    ...errorResponses(),
  },
};

const setPassword = (method: 'PUT' | 'POST') =>
  defineRoute({
    method,
    paths: ['/users/:id/password'],
    document: RestSetUserPasswordDocument,
    schema: {
      operationId: method === 'PUT' ? 'setUserPassword' : 'setUserPasswordPost', summary: method === 'PUT' ? "Set a user's password" : "Set a user's password (POST)", tags: TAGS,
      description: method === 'PUT'
        ? 'Your own (with previous_password; wrong ones count as failed logins), or, for admins, any user\'s of the account without it. Sessions on the old password end at once.'
        : 'The same as PUT /api/v2/users/{id}/password (Zendesk\'s admin "set password" is a POST).',
      params: IdParams,
      body: wrappedBody('user', PASSWORD_FIELDS),
      response: { 200: answer(Type.Object({}, { additionalProperties: false }), 'Set'), ...errorResponses({ id: true, body: 'fields' }) },
    },
    variables: (req) => {
      const body = unwrap(req.body, 'user');
      return { id: req.params.id, password: body.password, previousPassword: body.previous_password };
    },
    respond: () => ({ status: 200, body: {} }),
  });

const PATH = '/users';
const oneUser = (u: RestUserFragment) => ({ user: serializeUser(u) });

export const userRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [PATH],
    document: RestListUsersDocument,
    schema: LIST_SCHEMA,
    variables: (req) => ({ role: req.query.role ? ROLE[req.query.role] : undefined, ...pageVariables(req.query) }),
    respond: (data, req) => ({ status: 200, body: { users: data.users.edges.map((e) => serializeUser(e.node)), ...pageFields(req, data.users) } }),
  }),
  getRoute({
    path: `${PATH}/me`,
    document: RestShowMeDocument,
    schema: { operationId: 'showMe', summary: 'Show the current user', tags: TAGS, description: 'The user the credentials (Basic or a bearer token) act as. Anyone.' },
    answer: { schema: OneUser, description: 'The current user' },
    body: (data) => oneUser(data.me),
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowUserDocument,
    schema: { operationId: 'showUser', summary: 'Show a user', tags: TAGS, description: 'Admins: any user of the account; others: themselves.' },
    answer: { schema: OneUser, description: 'The user' },
    body: (data) => data.user && oneUser(data.user),
  }),
  createRoute({
    path: PATH,
    document: RestCreateUserDocument,
    schema: { operationId: 'createUser', summary: 'Create a user', tags: TAGS, description: 'A user of the account (end_user by default). Admins.', body: wrappedBody('user', CREATE_FIELDS) },
    answer: { schema: OneUser, description: 'The user' },
    variables: (req) => ({ input: createInput(unwrap(req.body, 'user')) }),
    created: (data) => data.createUser,
    body: (data) => oneUser(data.createUser),
  }),
  updateRoute({
    path: `${PATH}/:id`,
    document: RestUpdateUserDocument,
    schema: {
      operationId: 'updateUser', summary: 'Update a user', tags: TAGS, body: wrappedBody('user', UPDATE_FIELDS),
      description: 'Partial: omitted fields keep their value. A role change or a deactivation takes effect at once; the last active admin can be neither demoted nor deactivated. Admins.',
    },
    answer: { schema: OneUser, description: 'The user' },
    variables: (req) => ({ id: req.params.id, input: updateInput(unwrap(req.body, 'user')) }),
    body: (data) => oneUser(data.updateUser),
  }),
  defineRoute({
    method: 'DELETE',
    paths: [`${PATH}/:id`],
    document: RestDeleteUserDocument,
    schema: {
      operationId: 'deleteUser', summary: 'Delete (deactivate) a user', tags: TAGS,
      description: "Zendesk's soft delete: the user is deactivated and their tokens revoked (422 for the last active admin). Admins.",
      params: IdParams,
      body: IgnoredBody,
      // 422: the last active admin
      response: { 200: answer(OneUser, 'The user, deactivated'), ...errorResponses({ id: true, body: 'ignored', extra: { 422: ERRORS[422] } }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => ({ status: 200, body: oneUser(data.deleteUser) }),
  }),
  setPassword('PUT'),
  // Zendesk's admin "set password" is a POST
  setPassword('POST'),
];
