import {
  RestCreateOAuthTokenDocument,
  RestListOAuthTokensDocument,
  RestRevokeCurrentOAuthTokenDocument,
  RestRevokeOAuthTokenDocument,
  RestShowCurrentOAuthTokenDocument,
  RestShowOAuthTokenDocument,
  type RestOAuthTokenFragment,
} from '../generated/graphql';
import { BadRequestError, MUST_BE, NotFoundError, ValidationError } from '../domain/errors';
import { defineRoute, SHOWS_SECRET, type RestRequest, type AnyRestRoute } from './adapter';
import { isoSeconds, unwrap } from './body';
import { intParam, linkTo, queryParam } from './query';

/** Zendesk's OAuth token JSON (API.md §6). */
export function serializeOAuthToken(t: RestOAuthTokenFragment) {
  return {
    id: Number(t.id),
    token: t.token,
    client_id: t.clientId === null || t.clientId === undefined ? null : Number(t.clientId),
    user_id: Number(t.userId),
    scopes: t.scopes,
    created_at: isoSeconds(t.createdAt),
    expires_at: isoSeconds(t.expiresAt),
    used_at: isoSeconds(t.usedAt),
    refresh_token: t.refreshToken ?? null,
    refresh_token_expires_at: isoSeconds(t.refreshTokenExpiresAt),
    url: t.url,
  };
}

const CURSOR_PARAMS = ['page[size]', 'page[after]', 'page[before]'];

function clientIdParam(req: RestRequest): string | undefined {
  const raw = queryParam(req.query, 'client_id');
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,19}$/.test(raw)) throw new BadRequestError('client_id must be an integer');
  return raw;
}

/** Zendesk's `all`: every token of the account instead of the caller's own. */
function allParam(req: RestRequest): boolean {
  const raw = queryParam(req.query, 'all');
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new BadRequestError('all must be true or false');
}

function listVariables(req: RestRequest) {
  const clientId = clientIdParam(req);
  const all = allParam(req);
  if (CURSOR_PARAMS.some((p) => req.query[p] !== undefined)) {
    const size = intParam(req.query, 'page[size]');
    const after = queryParam(req.query, 'page[after]') || undefined;
    const before = queryParam(req.query, 'page[before]') || undefined;
    return before ? { all, clientId, last: size, before, withCount: false } : { all, clientId, first: size, after, withCount: false };
  }
  return { all, clientId, page: intParam(req.query, 'page') ?? 1, perPage: intParam(req.query, 'per_page') ?? 100, withCount: true };
}

export const oauthTokenRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/oauth/tokens'],
    document: RestListOAuthTokensDocument,
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
          next_page: pageInfo.hasNextPage ? linkTo(req.baseUrl, req.url, { page: page + 1 }) : null,
          previous_page: pageInfo.hasPreviousPage ? linkTo(req.baseUrl, req.url, { page: page - 1 }) : null,
          count: totalCount ?? 0,
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    paths: ['/oauth/tokens/current'],
    document: RestShowCurrentOAuthTokenDocument,
    variables: () => ({}),
    respond: (data) => ({ status: 200, body: { token: serializeOAuthToken(data.currentOAuthToken) } }),
  }),
  defineRoute({
    method: 'GET',
    paths: ['/oauth/tokens/:id'],
    document: RestShowOAuthTokenDocument,
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
    variables: (req) => {
      const body = unwrap(req.body, 'token');
      // The body's client_id wins; the query parameter is the fallback (seed §4.2).
      let clientId: unknown = body.client_id ?? queryParam(req.query, 'client_id');
      if (typeof clientId === 'string' && /^\d{1,19}$/.test(clientId)) clientId = Number(clientId);
      if (clientId !== undefined && clientId !== null && !(Number.isSafeInteger(clientId) && (clientId as number) > 0)) {
        throw new ValidationError({ client_id: [{ error: 'InvalidValue', description: `Client: ${MUST_BE.positiveInteger}` }] });
      }
      const scopes = body.scopes;
      if (scopes !== undefined && scopes !== null && !(Array.isArray(scopes) && scopes.every((s) => typeof s === 'string'))) {
        throw new ValidationError({ scopes: [{ error: 'InvalidValue', description: `Scopes: ${MUST_BE.stringArray}` }] });
      }
      return { input: { clientId: clientId == null ? null : String(clientId), scopes: (scopes as string[] | undefined) ?? null } };
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
    variables: () => ({}),
    respond: () => ({ status: 204 }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: ['/oauth/tokens/:id'],
    document: RestRevokeOAuthTokenDocument,
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
