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
import { ValidationError } from '../domain/errors';
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
    client_identifier: Type.String({ description: 'Chosen on create (Zendesk Support\'s "identifier") or generated; unique in the account, immutable' }),
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
  // Zendesk Support's names (its OAuth Clients API), mapped to ours by clientInput()
  identifier: BodyField(
    Type.String(), mustBe('Identifier', 'string'),
    'Zendesk Support: the client_identifier, chosen on create (1..100 letters, digits, "_", "." or "-", unique in the account; generated when omitted). Immutable: on update only its current value is accepted',
  ),
  kind: BodyField(StringEnum(['public', 'confidential']), mustBe('Kind', 'clientType'), 'Zendesk Support: the client_type'),
  redirect_uri: BodyField(Type.Union([Type.String(), Type.Array(Type.String())]), mustBe('Redirect uri', 'strings'), 'Zendesk Support: the redirect_uris'),
  description: BodyField(Type.String(), mustBe('Description', 'string'), 'Zendesk Support: at most 1024 characters; "" is stored as null. Stored, shown by GraphQL, not in this JSON'),
  logo_url: BodyField(
    Type.String(), mustBe('Logo url', 'string'),
    'Zendesk Support: an absolute https URL (http only on localhost, 127.0.0.1 or [::1]), at most 2048 characters; "" is stored as null. Stored, shown by GraphQL, not in this JSON',
  ),
};
const ClientBody = wrappedBody('client', CLIENT_FIELDS);

/** The same field in both vocabularies (ours, Zendesk Support's): giving both is ambiguous, refused. */
const SPELLINGS = [['redirect_uris', 'redirect_uri'], ['client_type', 'kind'], ['client_identifier', 'identifier']] as const;
/** Names only Zendesk Support's body uses: such a body may omit scopes (Support's clients have none). */
const SUPPORT_ONLY = ['identifier', 'kind', 'redirect_uri', 'description', 'logo_url'] as const;

const SECRET_FIELDS = {
  grace_period: BodyField(
    Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
    'Grace period: must be an integer number of seconds from 0 to 604800',
    'Seconds (0..604800) for which the previous secret stays valid at the grant endpoints',
  ),
};

const CLIENT_TYPES: Record<'public' | 'confidential', OAuthClientType> = { public: 'PUBLIC', confidential: 'CONFIDENTIAL' };

/**
 * The GraphQL input of a body (snake_case in, camelCase out), in our vocabulary or
 * Zendesk Support's, or both mixed (docs/api.md, "OAuth clients"); an absent field
 * stays absent (a partial update keeps it). On create, a Support body without scopes
 * gets "read write".
 */
function clientInput(fields: Fields<typeof CLIENT_FIELDS>, create: boolean) {
  // client_identifier is read-only and ignored (a client's own JSON may be sent back), but not beside identifier
  const given = (k: string) => (fields as Record<string, unknown>)[k] !== undefined;
  const twice = SPELLINGS.filter(([ours, theirs]) => given(ours) && given(theirs));
  if (twice.length) {
    throw new ValidationError(Object.fromEntries(twice.map(([ours, theirs]) => [
      theirs, [{ error: 'InvalidValue', description: `${theirs} and ${ours} are the same field: give one of them, not both` }],
    ])));
  }
  const { name, company, scopes, description, identifier } = fields;
  // Either spelling, whichever was given: a null in ours stays null (and is refused), not "absent"
  const type = given('client_type') ? fields.client_type : fields.kind;
  const uris = given('redirect_uris') ? fields.redirect_uris : fields.redirect_uri;
  const supportScopes = create && scopes === undefined && SUPPORT_ONLY.some(given) ? 'read write' : scopes;
  return {
    name, company, description, scopes: supportScopes, clientIdentifier: identifier, logoUrl: fields.logo_url,
    clientType: type && CLIENT_TYPES[type], redirectUris: typeof uris === 'string' ? [uris] : uris,
  };
}

const TAGS = ['OAuth clients'];
const PATH = '/oauth/clients';

/**
 * A new secret for a client: the seed's two POST forms and Zendesk Support's PUT
 * …/generate_secret run the same operation, with the same body, answer and audit record.
 */
function generateSecretRoute(method: 'POST' | 'PUT', paths: string[], operationId: string) {
  return defineRoute({
    method,
    paths,
    document: RestGenerateOAuthClientSecretDocument,
    schema: {
      operationId, summary: 'Generate a new client secret', tags: TAGS,
      description: 'The previous secret stops working at once, or after grace_period seconds at the grant endpoints. No body needed. Admins.',
      params: IdParams,
      body: wrappedBody('client', SECRET_FIELDS),
      response: {
        200: answer(Type.Object({ client_secret: Type.String({ description: 'The full new secret, this once' }) }, { additionalProperties: false }), 'The new secret', HEADERS.noStore),
        ...errorResponses({ id: true, body: 'fields' }),
      },
    },
    variables: (req) => ({ id: req.params.id, gracePeriod: unwrap(req.body, 'client').grace_period }),
    respond: (data) => ({ status: 200, body: { client_secret: data.generateOAuthClientSecret.clientSecret }, headers: SHOWS_SECRET }),
  });
}

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
    variables: (req) => ({ input: clientInput(unwrap(req.body, 'client'), true) }),
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
    variables: (req) => ({ id: req.params.id, input: clientInput(unwrap(req.body, 'client'), false) }),
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
  generateSecretRoute('POST', [`${PATH}/:id/client_secret`, `${PATH}/:id`], 'generateOAuthClientSecret'),
  // Zendesk Support's form (node-zendesk's oauthclients.generateSecret): no body needed, same answer
  generateSecretRoute('PUT', [`${PATH}/:id/generate_secret`], 'generateOAuthClientSecretSupport'),
];
