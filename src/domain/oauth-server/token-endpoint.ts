import { authenticateClient, withClient, type ProtocolRequest } from './client-authentication';
import { UnsupportedGrantTypeError } from './oauth-errors';
import { requiredParam } from './params';
import { authorizationCodeGrant } from './grant-authorization-code';
import { clientCredentialsGrant } from './grant-client-credentials';
import { refreshTokenGrant } from './grant-refresh-token';
import type { TokenResponse } from './token-response';
import type { OAuthServerDeps } from './oauth-server.deps';

// `cached`: the grant's statement checks a client from the grant cache (clientCheckSql);
// the authorization_code grant (once per consent) always looks its client up.
const GRANTS = {
  authorization_code: { grant: authorizationCodeGrant, requireSecret: false, cached: false },
  refresh_token: { grant: refreshTokenGrant, requireSecret: false, cached: true },
  client_credentials: { grant: clientCredentialsGrant, requireSecret: false, cached: true },
} as const;

export const SUPPORTED_GRANT_TYPES = Object.keys(GRANTS) as (keyof typeof GRANTS)[];

/**
 * POST /oauth/tokens. `password` and the implicit grant were removed (as by
 * Zendesk in 2025): they and anything else are unsupported_grant_type.
 */
export async function tokenEndpoint(deps: OAuthServerDeps, request: ProtocolRequest): Promise<TokenResponse> {
  const grantType = requiredParam(request.params, 'grant_type');
  if (!Object.prototype.hasOwnProperty.call(GRANTS, grantType)) throw new UnsupportedGrantTypeError(`Unsupported grant_type: ${grantType.slice(0, 50)}`);
  const { grant, requireSecret, cached } = GRANTS[grantType as keyof typeof GRANTS];
  if (cached) return withClient(deps, request, requireSecret, (client) => grant(deps, client, request.params, request.origin));
  return grant(deps, await authenticateClient(deps, request, requireSecret), request.params, request.origin);
}
