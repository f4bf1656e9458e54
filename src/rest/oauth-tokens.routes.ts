import {
  RestCreateOAuthTokenDocument,
  RestListOAuthTokensDocument,
  RestRevokeCurrentOAuthTokenDocument,
  RestRevokeOAuthTokenDocument,
  RestShowCurrentOAuthTokenDocument,
  RestShowOAuthTokenDocument,
  type RestOAuthTokenFragment,
} from '../generated/graphql';
import { Type } from 'typebox';
import { MAX_SCOPE_LENGTH, MAX_SCOPES } from '../domain/scopes';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { pageFields, pageVariables } from './pagination';
import { createRoute, deleteRoute, getRoute, showRoute } from './record-routes';
import {
  answer, BodyField, Keyed, errorResponses, IdNumberOrDigits, IgnoredBody, mustBe, NoContent, Nullable, NullableTimestamp, PageFields, PageQuery, QueryBoolean,
  QueryString, Timestamp, unwrap, wrappedBody,
} from './schemas';

const TOKEN_EXAMPLE = {
  id: 42, token: 'cDf0O1gLzQ', client_id: 7, user_id: 1, scopes: ['read', 'write'], created_at: '2026-11-21T10:29:59Z', expires_at: null,
  used_at: '2026-11-22T08:00:00Z', refresh_token: null, refresh_token_expires_at: null, url: 'https://help.example.com/api/v2/oauth/tokens/42.json',
};

/** Zendesk's OAuth token JSON (docs/api.md, "OAuth tokens"). */
const OAuthTokenJson = Type.Object(
  {
    id: Type.Integer(),
    token: Type.String({ description: 'In full only in the create answer; elsewhere its first 10 characters' }),
    client_id: Nullable(Type.Integer(), { description: "The client's id (not its identifier)" }),
    user_id: Type.Integer({ description: 'The user the token acts as' }),
    scopes: Type.Array(Type.String(), { description: 'As given at creation, invalid ones included' }),
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    used_at: NullableTimestamp,
    refresh_token: Nullable(Type.String(), { description: 'The first 10 characters of its refresh token (grant endpoint tokens)' }),
    refresh_token_expires_at: NullableTimestamp,
    url: Type.String({ format: 'uri' }),
  },
  { additionalProperties: false, title: 'OAuthToken', examples: [TOKEN_EXAMPLE] },
);
const OneToken = Keyed('token', OAuthTokenJson);

/** Zendesk's OAuth token JSON (docs/api.md, "OAuth tokens"). */
function serializeOAuthToken(t: RestOAuthTokenFragment) {
  return {
    id: Number(t.id),
    token: t.token,
    client_id: t.clientId === null || t.clientId === undefined ? null : Number(t.clientId),
    user_id: Number(t.userId),
    scopes: t.scopes,
    created_at: isoSeconds(t.createdAt)!,
    expires_at: isoSeconds(t.expiresAt),
    used_at: isoSeconds(t.usedAt),
    refresh_token: t.refreshToken ?? null,
    refresh_token_expires_at: isoSeconds(t.refreshTokenExpiresAt),
    url: t.url,
  };
}

const ListQuery = Type.Object({
  all: QueryBoolean('all must be true or false', { description: "true: every token of the account; false (default): the caller's own" }),
  client_id: QueryString({ pattern: '^[0-9]{1,19}$', invalid: 'client_id must be an integer', description: "Only this client's tokens (an unknown client gives an empty list)" }),
  ...PageQuery,
});

const TAGS = ['OAuth tokens'];

const LIST_SCHEMA = {
  operationId: 'listOAuthTokens', summary: 'List OAuth tokens', tags: TAGS,
  description: "The admin's own tokens, or every token of the account with all=true, id ascending. Cursor pagination with page[size], page[after] or page[before]; offset pagination otherwise. Admins.",
  querystring: ListQuery,
  response: {
    200: answer(
      Type.Object({ tokens: Type.Array(OAuthTokenJson), ...PageFields }, {
        additionalProperties: false,
        examples: [{
          tokens: [TOKEN_EXAMPLE],
          meta: { has_more: true, after_cursor: 'NDI.x1Yk2mQ0bVd3hP9s', before_cursor: 'NDI.x1Yk2mQ0bVd3hP9s' },
          links: { next: 'https://help.example.com/api/v2/oauth/tokens.json?page%5Bsize%5D=1&page%5Bafter%5D=NDI.x1Yk2mQ0bVd3hP9s', prev: null },
        }],
      }),
      'A page of tokens: meta and links in cursor mode, next_page, previous_page and count in offset mode',
    ),
    ...errorResponses(),
  },
};

const TOKEN_FIELDS = {
  client_id: BodyField(IdNumberOrDigits, mustBe('Client', 'positiveInteger'), "Required (here or as the client_id query parameter): the client's id"),
  scopes: BodyField(Type.Array(Type.String()), mustBe('Scopes', 'stringArray'), `Required: 1..${MAX_SCOPES} scopes of at most ${MAX_SCOPE_LENGTH} characters`),
};

/** A client id as the domain reads it: digits without leading zeros ("0012" is 12). */
const idText = (v: number | string) => (typeof v === 'string' && /^[0-9]{1,19}$/.test(v) ? String(BigInt(v)) : String(v));

const PATH = '/oauth/tokens';
const ONE_TOKEN = { schema: OneToken, description: 'The token' };
const oneToken = (t: RestOAuthTokenFragment) => ({ token: serializeOAuthToken(t) });

export const oauthTokenRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [PATH],
    document: RestListOAuthTokensDocument,
    schema: LIST_SCHEMA,
    variables: (req) => ({ all: req.query.all ?? false, clientId: req.query.client_id, ...pageVariables(req.query) }),
    respond: (data, req) => ({ status: 200, body: { tokens: data.oauthTokens.edges.map((e) => serializeOAuthToken(e.node)), ...pageFields(req, data.oauthTokens) } }),
  }),
  getRoute({
    path: `${PATH}/current`,
    document: RestShowCurrentOAuthTokenDocument,
    schema: {
      operationId: 'showCurrentOAuthToken', summary: 'Show the current token', tags: TAGS,
      description: 'The token presented in Authorization: Bearer (Basic credentials: 400). Anyone; a token may always show itself.',
    },
    answer: ONE_TOKEN,
    body: (data) => oneToken(data.currentOAuthToken),
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowOAuthTokenDocument,
    schema: { operationId: 'showOAuthToken', summary: 'Show an OAuth token', tags: TAGS, description: 'Admins: any token of the account; others: their own.' },
    answer: ONE_TOKEN,
    body: (data) => data.oauthToken && oneToken(data.oauthToken),
  }),
  createRoute({
    path: PATH,
    document: RestCreateOAuthTokenDocument,
    schema: {
      operationId: 'createOAuthToken', summary: 'Create an OAuth token', tags: TAGS,
      description: 'A token of the calling admin for one of the account\'s clients; the full token is returned this once. Admins.',
      querystring: Type.Object({ client_id: QueryString({ description: 'The client, when the body names none' }) }),
      body: wrappedBody('token', TOKEN_FIELDS),
    },
    answer: { schema: OneToken, description: 'The token, in full' },
    secret: true,
    variables: (req) => {
      const body = unwrap(req.body, 'token');
      // The body's client_id wins; the query parameter is the fallback (docs/api.md, "OAuth tokens"). The domain judges either.
      const clientId = body.client_id ?? req.query.client_id;
      return { input: { clientId: clientId == null ? null : idText(clientId), scopes: body.scopes ?? null } };
    },
    created: (data) => data.createOAuthToken,
    body: (data) => oneToken(data.createOAuthToken),
  }),
  defineRoute({
    method: 'DELETE',
    paths: [`${PATH}/current`],
    document: RestRevokeCurrentOAuthTokenDocument,
    schema: {
      operationId: 'revokeCurrentOAuthToken', summary: 'Revoke the current token', tags: TAGS,
      description: 'Revokes the token presented in Authorization: Bearer (Basic credentials: 400); it fails on the very next request. Anyone.',
      body: IgnoredBody,
      response: { 204: NoContent('Revoked'), ...errorResponses({ body: 'ignored' }) },
    },
    variables: () => ({}),
    respond: () => ({ status: 204 }),
  }),
  deleteRoute({
    path: `${PATH}/:id`,
    document: RestRevokeOAuthTokenDocument,
    schema: { operationId: 'revokeOAuthToken', summary: 'Revoke an OAuth token', tags: TAGS, description: 'Admins: any token of the account; others: their own.' },
    done: 'Revoked',
  }),
];
