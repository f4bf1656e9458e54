import { Type } from 'typebox';
import {
  RestCreateOAuthClientDocument,
  RestDeleteOAuthClientDocument,
  RestGenerateOAuthClientSecretDocument,
  RestListOAuthClientsDocument,
  RestShowOAuthClientDocument,
  RestUpdateOAuthClientDocument,
  type OAuthClientType,
  type RestOAuthClientFragment,
} from '../generated/graphql';
import { defineRoute, SHOWS_SECRET, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { createRoute, deleteRoute, getRoute, showRoute, updateRoute } from './record-routes';
import {
  answer, BodyField, errorResponses, HEADERS, IdParams, mustBe, Nullable, NullableTimestamp, StringEnum, Timestamp, unwrap, wrappedBody, type Fields,
} from './schemas';

/** Zendesk's OAuth client JSON (docs/api.md, "OAuth clients"). */
const OAuthClientJson = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    company: Nullable(Type.String()),
    client_identifier: Type.String({ description: 'Generated, unique, immutable' }),
    client_secret: Type.String({ description: 'In full only from create and generate-secret; elsewhere its first 10 characters and "..."' }),
    client_type: StringEnum(['public', 'confidential']),
    redirect_uris: Type.String({ description: 'The URIs joined by a single space' }),
    scopes: StringEnum(['read', 'write', 'read write']),
    agent_id: Nullable(Type.Integer(), { description: 'The admin who created the client' }),
    create_date: Timestamp,
    update_date: NullableTimestamp,
  },
  {
    additionalProperties: false,
    title: 'OAuthClient',
    examples: [{
      id: 7, name: 'Dashboard', company: 'Acme', client_identifier: 'UFJ3hFhVu9T4UT2vJnJyYFP58lV-R-TT8T41ceA9', client_secret: 'Z0RFc8PxKS...',
      client_type: 'public', redirect_uris: 'https://app.example.com/cb', scopes: 'read write', agent_id: 1, create_date: '2026-11-21T10:29:59Z', update_date: null,
    }],
  },
);

/** Zendesk's OAuth client JSON (docs/api.md, "OAuth clients"). */
function serializeOAuthClient(c: RestOAuthClientFragment) {
  return {
    id: Number(c.id),
    name: c.name,
    company: c.company ?? null,
    client_identifier: c.clientIdentifier,
    client_secret: c.clientSecret,
    client_type: c.clientType === 'CONFIDENTIAL' ? ('confidential' as const) : ('public' as const),
    redirect_uris: c.redirectUris.join(' '),
    scopes: c.scopes as 'read' | 'write' | 'read write',
    agent_id: c.agentId === null || c.agentId === undefined ? null : Number(c.agentId),
    create_date: isoSeconds(c.createDate)!,
    update_date: isoSeconds(c.updateDate),
  };
}

const CLIENT_FIELDS = {
  name: BodyField(Type.String(), mustBe('Name', 'string'), 'Required on create; 1..255 characters after trimming'),
  company: BodyField(Type.String(), mustBe('Company', 'string'), 'At most 255 characters; "" is stored as null'),
  client_type: BodyField(StringEnum(['public', 'confidential']), mustBe('Client type', 'clientType'), 'public (default) or confidential'),
  scopes: BodyField(Type.String(), mustBe('Scopes', 'string'), 'Required on create: read, write, or read write (in any order, any whitespace)'),
  redirect_uris: BodyField(Type.Union([Type.String(), Type.Array(Type.String())]), mustBe('Redirect uris', 'strings'), 'Required on create: URIs separated by whitespace, or an array'),
};
const ClientBody = wrappedBody('client', CLIENT_FIELDS);

const SECRET_FIELDS = {
  grace_period: BodyField(
    Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
    'Grace period: must be an integer number of seconds from 0 to 604800',
    'Seconds (0..604800) for which the previous secret stays valid at the grant endpoints',
  ),
};

const CLIENT_TYPES: Record<'public' | 'confidential', OAuthClientType> = { public: 'PUBLIC', confidential: 'CONFIDENTIAL' };

/** The GraphQL input of a body (snake_case in, camelCase out); an absent field stays absent (a partial update keeps it). */
function clientInput(fields: Fields<typeof CLIENT_FIELDS>) {
  const { name, company, client_type: type, scopes, redirect_uris: uris } = fields;
  return { name, company, scopes, clientType: type && CLIENT_TYPES[type], redirectUris: typeof uris === 'string' ? [uris] : uris };
}

const TAGS = ['OAuth clients'];
const PATH = '/oauth/clients';

export const oauthClientRoutes: AnyRestRoute[] = [
  getRoute({
    path: PATH,
    document: RestListOAuthClientsDocument,
    schema: { operationId: 'listOAuthClients', summary: 'List OAuth clients', tags: TAGS, description: "The account's clients, id ascending, secrets truncated. Admins." },
    answer: { schema: Type.Array(OAuthClientJson), description: 'The clients' },
    body: (data) => data.oauthClients.map(serializeOAuthClient),
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowOAuthClientDocument,
    schema: { operationId: 'showOAuthClient', summary: 'Show an OAuth client', tags: TAGS, description: 'Secret truncated. Admins.' },
    answer: { schema: OAuthClientJson, description: 'The client' },
    body: (data) => data.oauthClient && serializeOAuthClient(data.oauthClient),
  }),
  createRoute({
    path: PATH,
    document: RestCreateOAuthClientDocument,
    schema: { operationId: 'createOAuthClient', summary: 'Create an OAuth client', tags: TAGS, description: 'Returns the full secret, this once. Admins.', body: ClientBody },
    answer: { schema: OAuthClientJson, description: 'The client, with its full secret and update_date null' },
    secret: true,
    variables: (req) => ({ input: clientInput(unwrap(req.body, 'client')) }),
    created: (data) => data.createOAuthClient,
    body: (data) => serializeOAuthClient(data.createOAuthClient),
  }),
  updateRoute({
    path: `${PATH}/:id`,
    document: RestUpdateOAuthClientDocument,
    schema: {
      operationId: 'updateOAuthClient', summary: 'Update an OAuth client', tags: TAGS, body: ClientBody,
      description: 'Partial: omitted fields keep their value; a field that is present must be valid. Admins.',
    },
    answer: { schema: OAuthClientJson, description: 'The client, update_date set, secret truncated' },
    variables: (req) => ({ id: req.params.id, input: clientInput(unwrap(req.body, 'client')) }),
    body: (data) => serializeOAuthClient(data.updateOAuthClient),
  }),
  deleteRoute({
    path: `${PATH}/:id`,
    document: RestDeleteOAuthClientDocument,
    schema: {
      operationId: 'deleteOAuthClient', summary: 'Delete an OAuth client', tags: TAGS,
      description: "Revokes all the client's tokens and deletes its grants, codes and secrets, in one transaction. Admins.",
    },
    done: 'Deleted',
  }),
  defineRoute({
    method: 'POST',
    paths: [`${PATH}/:id/client_secret`, `${PATH}/:id`],
    document: RestGenerateOAuthClientSecretDocument,
    schema: {
      operationId: 'generateOAuthClientSecret', summary: 'Generate a new client secret', tags: TAGS,
      description: 'The previous secret stops working at once, or after grace_period seconds at the grant endpoints. Admins.',
      params: IdParams,
      body: wrappedBody('client', SECRET_FIELDS),
      response: {
        200: answer(Type.Object({ client_secret: Type.String({ description: 'The full new secret, this once' }) }, { additionalProperties: false }), 'The new secret', HEADERS.noStore),
        ...errorResponses({ id: true, body: 'fields' }),
      },
    },
    variables: (req) => ({ id: req.params.id, gracePeriod: unwrap(req.body, 'client').grace_period }),
    respond: (data) => ({ status: 200, body: { client_secret: data.generateOAuthClientSecret.clientSecret }, headers: SHOWS_SECRET }),
  }),
];
