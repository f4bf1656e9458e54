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
import { queryParam } from './query';
import { pageFields, pageVariables } from './pagination';

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

function clientIdParam(req: RestRequest): string | undefined {
  const raw = queryParam(req.query, 'client_id');
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,19}$/.test(raw)) throw new BadRequestError('client_id must be an integer');
  return raw;
}

const listVariables = (req: RestRequest) => ({ clientId: clientIdParam(req), ...pageVariables(req) });

export const oauthTokenRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: ['/oauth/tokens'],
    document: RestListOAuthTokensDocument,
    variables: listVariables,
    respond: (data, req) => {
      const { edges, pageInfo, totalCount } = data.oauthTokens;
      return { status: 200, body: { tokens: edges.map((e) => serializeOAuthToken(e.node)), ...pageFields(listVariables(req), pageInfo, totalCount, req) } };
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
