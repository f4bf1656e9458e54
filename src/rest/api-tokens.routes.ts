import { Type } from 'typebox';
import {
  RestCreateApiTokenDocument, RestDeleteApiTokenDocument, RestListApiTokensDocument, RestShowApiTokenDocument, type RestApiTokenFragment,
} from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { pageFields, pageVariables } from './pagination';
import { createRoute, deleteRoute, showRoute } from './record-routes';
import { answer, BodyField, errorResponses, Keyed, mustBe, Nullable, NullableTimestamp, PageFields, PageQuery, Timestamp, unwrap, wrappedBody } from './schemas';

// Zendesk's API Tokens API (docs/api.md, "API tokens"): admins. The full token only in the
// create answer; everywhere else its first 10 characters and "...".

const EXAMPLE = {
  id: 7, url: 'https://help.example.com/api/v2/api_tokens/7.json', description: 'CRM sync', token: 'Hk3v9QpX2b...', created_by: 1,
  created_at: '2026-11-21T10:29:59Z', last_used_at: null,
};

const ApiTokenJson = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String({ format: 'uri' }),
    description: Type.String(),
    token: Type.String({ description: 'In full only in the create answer; elsewhere its first 10 characters and "..."' }),
    created_by: Nullable(Type.Integer(), { description: 'The admin who created it; null once that user is gone' }),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
  },
  { additionalProperties: false, title: 'ApiToken', examples: [EXAMPLE] },
);
const OneApiToken = Keyed('api_token', ApiTokenJson);

function serializeApiToken(t: RestApiTokenFragment) {
  return {
    id: Number(t.id), url: t.url, description: t.description, token: t.token, created_by: t.createdBy === null || t.createdBy === undefined ? null : Number(t.createdBy),
    created_at: isoSeconds(t.createdAt)!, last_used_at: isoSeconds(t.lastUsedAt),
  };
}
const oneApiToken = (t: RestApiTokenFragment) => ({ api_token: serializeApiToken(t) });

/** {"api_token": {"description": "..."}} (or flat) */
const FIELDS = {
  description: BodyField(Type.String(), mustBe('Description', 'string'), 'Required: what the token is for, 1..255 characters after trimming'),
};

const TAGS = ['API tokens'];
const PATH = '/api_tokens';

export const apiTokenRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [PATH],
    document: RestListApiTokensDocument,
    schema: {
      operationId: 'listApiTokens', summary: 'List API tokens', tags: TAGS,
      description: "The account's API tokens, id ascending, each shown by its first 10 characters. Cursor pagination with page[size], page[after] or page[before]; offset pagination otherwise. Admins.",
      querystring: Type.Object(PageQuery),
      response: {
        200: answer(
          Type.Object({ api_tokens: Type.Array(ApiTokenJson), ...PageFields }, {
            additionalProperties: false,
            examples: [{ api_tokens: [EXAMPLE], next_page: null, previous_page: null, count: 1 }],
          }),
          'A page of API tokens: meta and links in cursor mode, next_page, previous_page and count in offset mode',
        ),
        ...errorResponses(),
      },
    },
    variables: (req) => pageVariables(req.query),
    respond: (data, req) => ({ status: 200, body: { api_tokens: data.apiTokens.edges.map((e) => serializeApiToken(e.node)), ...pageFields(req, data.apiTokens) } }),
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowApiTokenDocument,
    schema: { operationId: 'showApiToken', summary: 'Show an API token', tags: TAGS, description: 'The token by its first 10 characters. Admins.' },
    answer: { schema: OneApiToken, description: 'The API token' },
    body: (data) => data.apiToken && oneApiToken(data.apiToken),
  }),
  createRoute({
    path: PATH,
    document: RestCreateApiTokenDocument,
    schema: {
      operationId: 'createApiToken', summary: 'Create an API token', tags: TAGS, body: wrappedBody('api_token', FIELDS),
      description: 'Returns the full token, this once: sign in with Basic {email}/token:{token} as any active user of the account. Admins.',
    },
    answer: { schema: OneApiToken, description: 'The API token, with the full token' },
    secret: true,
    variables: (req) => ({ input: { description: unwrap(req.body, 'api_token').description } }),
    created: (data) => data.createApiToken,
    body: (data) => oneApiToken(data.createApiToken),
  }),
  deleteRoute({
    path: `${PATH}/:id`,
    document: RestDeleteApiTokenDocument,
    schema: { operationId: 'deleteApiToken', summary: 'Delete an API token', tags: TAGS, description: 'The very next sign-in with it fails, in every process. Admins.' },
    done: 'Deleted',
  }),
];
