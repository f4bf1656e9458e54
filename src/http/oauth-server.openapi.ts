import { Type, type TSchema } from 'typebox';
import { DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../domain/errors';
import { OAUTH_PATHS } from '../domain/oauth-server/metadata';
import { SUPPORTED_GRANT_TYPES } from '../domain/oauth-server/token-endpoint';
import { StringEnum } from '../rest/schemas';

// The OAuth 2.0 authorization server's endpoints (src/http/plugins/oauth-server.ts) in
// the OpenAPI document. They are documented here rather than by route schemas: their
// parameters come as a form or JSON and are judged by the domain, which answers
// RFC 6749 errors ({"error", "error_description"}); a route schema would put Fastify's
// validation (and its error shapes) in front of them. The browser-facing authorization
// endpoint (HTML pages) is not an API operation and is left out.

const TAG = 'OAuth 2.0 authorization server';
const NO_STORE = {
  'cache-control': { schema: Type.String({ const: 'no-store' }) },
  pragma: { schema: Type.String({ const: 'no-cache' }) },
};

const json = (schema: TSchema) => ({ 'application/json': { schema } });

/** RFC 6749 §5.2 (RFC 7009 §2.2.1): the error body of every endpoint below. */
const OAuthError = Type.Object(
  {
    error: StringEnum(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'server_error', 'temporarily_unavailable']),
    error_description: Type.String(),
  },
  { additionalProperties: false, title: 'OAuthError' },
);

const errors = (clientAuth: boolean) => ({
  400: { description: 'invalid_request (malformed or repeated parameter, a body that is neither a form nor a JSON object, …), invalid_client without Basic, and the grant errors', headers: NO_STORE, content: json(OAuthError) },
  ...(clientAuth
    ? {
      401: {
        description: 'invalid_client, when the client authenticated with HTTP Basic',
        headers: { ...NO_STORE, 'www-authenticate': { schema: Type.String({ const: 'Basic realm="oauth", error="invalid_client"' }) } },
        content: json(OAuthError),
      },
    }
    : {}),
  413: { description: 'invalid_request: a body over 64 KiB', headers: NO_STORE, content: json(OAuthError) },
  500: { description: 'server_error: a bug', headers: NO_STORE, content: json(OAuthError) },
  503: { description: 'temporarily_unavailable: the database is unreachable', headers: { ...NO_STORE, 'retry-after': { schema: Type.String({ const: String(DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS) }) } }, content: json(OAuthError) },
});

const CLIENT_PARAMS = {
  client_id: Type.String({ description: "The client's client_identifier (or HTTP Basic, form-urlencoded first: not both)" }),
  client_secret: Type.String({ description: 'Confidential clients; a public client may send client_id alone' }),
};

/** Parameters as a form (RFC 6749) or a JSON object (Zendesk); one value each. */
const params = (properties: Record<string, TSchema>, required: string[] = []) => {
  const schema = Type.Object(Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, required.includes(k) ? v : Type.Optional(v)])));
  return { required: true, content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } } };
};

const TokenResponse = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('bearer'),
    scope: Type.String({ description: 'Space-separated' }),
    expires_in: Type.Integer({ description: 'Seconds' }),
    refresh_token: Type.Optional(Type.String({ description: 'Not for client_credentials' })),
    refresh_token_expires_in: Type.Optional(Type.Integer({ description: 'Seconds' })),
  },
  { additionalProperties: false },
);

const Introspection = Type.Union([
  Type.Object(
    {
      active: Type.Literal(true),
      scope: Type.String(),
      client_id: Type.String(),
      username: Type.String(),
      sub: Type.String(),
      exp: Type.Optional(Type.Integer()),
      iat: Type.Integer(),
      token_type: StringEnum(['bearer', 'refresh_token']),
    },
    { additionalProperties: false },
  ),
  Type.Object({ active: Type.Literal(false) }, { additionalProperties: false }),
]);

const uri = Type.String({ format: 'uri' });
const strings = Type.Array(Type.String());
const Metadata = Type.Object(
  {
    issuer: uri,
    authorization_endpoint: uri,
    token_endpoint: uri,
    revocation_endpoint: uri,
    introspection_endpoint: uri,
    response_types_supported: strings,
    response_modes_supported: strings,
    grant_types_supported: strings,
    token_endpoint_auth_methods_supported: strings,
    revocation_endpoint_auth_methods_supported: strings,
    introspection_endpoint_auth_methods_supported: strings,
    code_challenge_methods_supported: strings,
    scopes_supported: strings,
    authorization_response_iss_parameter_supported: Type.Boolean(),
  },
  { additionalProperties: false },
);

const clientAuthenticated = [{ oauthClient: [] }, {}];
const lifetime = (description: string) => Type.Union([Type.String({ pattern: '^[0-9]+$' }), Type.Integer()], { description });

/** Path items for the OpenAPI document (paths are absolute: outside /api/v2). */
export const oauthServerPaths = {
  [OAUTH_PATHS.token]: {
    post: {
      operationId: 'oauthToken',
      summary: 'Grant endpoint (RFC 6749 §3.2)',
      description: 'authorization_code (with PKCE), refresh_token (rotates) and client_credentials (confidential clients).',
      tags: [TAG],
      security: clientAuthenticated,
      requestBody: params(
        {
          grant_type: StringEnum(SUPPORTED_GRANT_TYPES),
          code: Type.String({ description: 'authorization_code' }),
          redirect_uri: Type.String({ description: 'authorization_code: as in the authorization request' }),
          code_verifier: Type.String({ description: 'authorization_code: when the request had a challenge' }),
          refresh_token: Type.String({ description: 'refresh_token' }),
          scope: Type.String({ description: 'refresh_token and client_credentials: space-separated, within what was granted' }),
          expires_in: lifetime('Access token lifetime, 300 < x < 172800 seconds (default 1800)'),
          refresh_token_expires_in: lifetime('Refresh token lifetime, 604800 < y < 7776000 seconds (default 2592000)'),
          ...CLIENT_PARAMS,
        },
        ['grant_type'],
      ),
      responses: {
        200: { description: 'The tokens', headers: NO_STORE, content: json(TokenResponse) },
        ...errors(true),
        429: {
          description: 'invalid_request: client_credentials beyond the live tokens a client may hold (OAUTH_CLIENT_LIVE_TOKENS); Retry-After says when one expires',
          headers: { ...NO_STORE, 'retry-after': { schema: Type.String({ pattern: '^[0-9]+$' }) } },
          content: json(OAuthError),
        },
      },
    },
  },
  [OAUTH_PATHS.revocation]: {
    post: {
      operationId: 'oauthRevoke',
      summary: 'Revocation (RFC 7009)',
      description: "Always 200 with an empty body: for an unknown token too, and another client's token is left alone.",
      tags: [TAG],
      security: clientAuthenticated,
      requestBody: params({ token: Type.String(), token_type_hint: Type.String({ description: 'Accepted, not needed' }), ...CLIENT_PARAMS }, ['token']),
      responses: { 200: { description: 'Revoked (or nothing to revoke)', headers: NO_STORE }, ...errors(true) },
    },
  },
  [OAUTH_PATHS.introspection]: {
    post: {
      operationId: 'oauthIntrospect',
      summary: 'Introspection (RFC 7662)',
      description: 'For clients that authenticate with their secret.',
      tags: [TAG],
      security: [{ oauthClient: [] }],
      requestBody: params({ token: Type.String(), token_type_hint: Type.String({ description: 'Accepted, not needed' }), ...CLIENT_PARAMS }, ['token']),
      responses: { 200: { description: 'The token, or {"active": false}', headers: NO_STORE, content: json(Introspection) }, ...errors(true) },
    },
  },
  [OAUTH_PATHS.metadata]: {
    get: {
      operationId: 'oauthMetadata',
      summary: 'Authorization server metadata (RFC 8414)',
      tags: [TAG],
      security: [],
      responses: { 200: { description: 'The metadata; the issuer is the base URL the request came on', content: json(Metadata) } },
    },
  },
};
