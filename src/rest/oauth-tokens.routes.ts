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
import { NotFoundError } from '../domain/errors';
import { MAX_SCOPE_LENGTH, MAX_SCOPES } from '../domain/scopes';
import { defineRoute, SHOWS_SECRET, type AnyRestRoute, type RestRequest } from './adapter';
import { isoSeconds } from './body';
import { linkTo, offsetPageFields } from './query';
import {
  answer,
  BodyField,
  errorResponses,
  HEADERS,
  IdNumberOrDigits,
  IdParams,
  IgnoredBody,
  mustBe,
  NoContent,
  Nullable,
  NullableTimestamp,
  PageFields,
  PageQuery,
  QueryBoolean,
  QueryString,
  Timestamp,
  unwrap,
  wrappedBody,
} from './schemas';

const TOKEN_EXAMPLE = {
  id: 42, token: 'cDf0O1gLzQ', client_id: 7, user_id: 1, scopes: ['read', 'write'], created_at: '2026-11-21T10:29:59Z', expires_at: null,
  used_at: '2026-11-22T08:00:00Z', refresh_token: null, refresh_token_expires_at: null, url: 'https://help.example.com/api/v2/oauth/tokens/42.json',
};

/** Zendesk's OAuth token JSON (API.md §6). */
export const OAuthTokenJson = Type.Object(
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
const OneToken = Type.Object({ token: OAuthTokenJson }, { additionalProperties: false });

/** Zendesk's OAuth token JSON (API.md §6). */
export function serializeOAuthToken(t: RestOAuthTokenFragment) {
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

function listVariables(req: RestRequest<typeof LIST_SCHEMA>) {
  const q = req.query;
  const common = { all: q.all ?? false, clientId: q.client_id };
  if (q['page[size]'] !== undefined || q['page[after]'] !== undefined || q['page[before]'] !== undefined) {
    const size = q['page[size]'];
    const after = q['page[after]'] || undefined;
    const before = q['page[before]'] || undefined;
    return before ? { ...common, last: size, before, withCount: false } : { ...common, first: size, after, withCount: false };
  }
  return { ...common, page: q.page ?? 1, perPage: q.per_page ?? 100, withCount: true };
}

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

export const oauthTokenRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/oauth/tokens'],
    document: RestListOAuthTokensDocument,
    schema: LIST_SCHEMA,
    variables: listVariables,
    respond: (data, req) => {
      const { edges, pageInfo, totalCount } = data.oauthTokens;
      const tokens = edges.map((e) => serializeOAuthToken(e.node));
      const vars = listVariables(req);
      if (!vars.withCount) {
        const backward = 'before' in vars;
        const clear = { 'page[after]': undefined, 'page[before]': undefined };
        return {
          status: 200,
          body: {
            tokens,
            meta: { has_more: backward ? pageInfo.hasPreviousPage : pageInfo.hasNextPage, after_cursor: pageInfo.endCursor ?? null, before_cursor: pageInfo.startCursor ?? null },
            links: {
              next: pageInfo.hasNextPage && pageInfo.endCursor ? linkTo(req.baseUrl, req.url, { ...clear, 'page[after]': pageInfo.endCursor }) : null,
              prev: pageInfo.hasPreviousPage && pageInfo.startCursor ? linkTo(req.baseUrl, req.url, { ...clear, 'page[before]': pageInfo.startCursor }) : null,
            },
          },
        };
      }
      const page = (vars as { page: number }).page;
      return {
        status: 200,
        body: {
          tokens,
          ...offsetPageFields({ page, ...pageInfo }, totalCount ?? 0, req.baseUrl, req.url),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    paths: ['/oauth/tokens/current'],
    document: RestShowCurrentOAuthTokenDocument,
    schema: {
      operationId: 'showCurrentOAuthToken', summary: 'Show the current token', tags: TAGS,
      description: 'The token presented in Authorization: Bearer (Basic credentials: 400). Anyone; a token may always show itself.',
      response: { 200: answer(OneToken, 'The token'), ...errorResponses() },
    },
    variables: () => ({}),
    respond: (data) => ({ status: 200, body: { token: serializeOAuthToken(data.currentOAuthToken) } }),
  }),
  defineRoute({
    method: 'GET',
    paths: ['/oauth/tokens/:id'],
    document: RestShowOAuthTokenDocument,
    schema: {
      operationId: 'showOAuthToken', summary: 'Show an OAuth token', tags: TAGS,
      description: 'Admins: any token of the account; others: their own.',
      params: IdParams,
      response: { 200: answer(OneToken, 'The token'), ...errorResponses({ id: true }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => {
      if (!data.oauthToken) throw new NotFoundError();
      return { status: 200, body: { token: serializeOAuthToken(data.oauthToken) } };
    },
  }),
  defineRoute({
    method: 'POST',
    paths: ['/oauth/tokens'],
    document: RestCreateOAuthTokenDocument,
    schema: {
      operationId: 'createOAuthToken', summary: 'Create an OAuth token', tags: TAGS,
      description: 'A token of the calling admin for one of the account\'s clients; the full token is returned this once. Admins.',
      querystring: Type.Object({ client_id: QueryString({ description: 'The client, when the body names none' }) }),
      body: wrappedBody('token', TOKEN_FIELDS),
      response: {
        201: answer(OneToken, 'The token, in full', { ...HEADERS.location, ...HEADERS.noStore }),
        ...errorResponses({ body: 'fields' }),
      },
    },
    variables: (req) => {
      const body = unwrap(req.body, 'token');
      // The body's client_id wins; the query parameter is the fallback (seed §4.2). The domain judges either.
      const clientId = body.client_id ?? req.query.client_id;
      return { input: { clientId: clientId == null ? null : idText(clientId), scopes: body.scopes ?? null } };
    },
    respond: (data, req) => ({
      status: 201,
      body: { token: serializeOAuthToken(data.createOAuthToken) },
      headers: { location: `${req.baseUrl}/api/v2/oauth/tokens/${data.createOAuthToken.id}.json`, ...SHOWS_SECRET },
    }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: ['/oauth/tokens/current'],
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
  defineRoute({
    method: 'DELETE',
    paths: ['/oauth/tokens/:id'],
    document: RestRevokeOAuthTokenDocument,
    schema: {
      operationId: 'revokeOAuthToken', summary: 'Revoke an OAuth token', tags: TAGS,
      description: 'Admins: any token of the account; others: their own.',
      params: IdParams,
      body: IgnoredBody,
      response: { 204: NoContent('Revoked'), ...errorResponses({ id: true, body: 'ignored' }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
