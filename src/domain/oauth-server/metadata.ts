import { SUPPORTED_GRANT_TYPES } from './token-endpoint';

/** The paths of the authorization server, outside /api/v2 as Zendesk has them. */
export const OAUTH_PATHS = {
  authorization: '/oauth/authorizations/new',
  token: '/oauth/tokens',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  metadata: '/.well-known/oauth-authorization-server',
} as const;

const CLIENT_AUTH = ['client_secret_basic', 'client_secret_post'];

/** RFC 8414 metadata. `issuer`: the service's base URL (PUBLIC_URL, or the request's scheme and host). */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}${OAUTH_PATHS.authorization}`,
    token_endpoint: `${issuer}${OAUTH_PATHS.token}`,
    revocation_endpoint: `${issuer}${OAUTH_PATHS.revocation}`,
    introspection_endpoint: `${issuer}${OAUTH_PATHS.introspection}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: SUPPORTED_GRANT_TYPES,
    // public clients identify themselves with client_id alone ("none")
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH, 'none'],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH, 'none'],
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH,
    code_challenge_methods_supported: ['S256'],
    scopes_supported: ['read', 'write', 'impersonate'],
    // RFC 9207: the authorization response carries iss
    authorization_response_iss_parameter_supported: true,
  };
}
