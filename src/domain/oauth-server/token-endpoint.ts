import { authenticateClient, type ProtocolRequest } from './client-authentication';
import { UnsupportedGrantTypeError } from './oauth-errors';
import { requiredParam } from './params';
import { authorizationCodeGrant } from './grant-authorization-code';
import { clientCredentialsGrant } from './grant-client-credentials';
import { refreshTokenGrant } from './grant-refresh-token';
import type { TokenResponse } from './token-response';
import type { OAuthServerDeps } from './oauth-server.deps';

const GRANTS = {
  authorization_code: { grant: authorizationCodeGrant, requireSecret: false },
  refresh_token: { grant: refreshTokenGrant, requireSecret: false },
  client_credentials: { grant: clientCredentialsGrant, requireSecret: false },
} as const;

export const SUPPORTED_GRANT_TYPES = Object.keys(GRANTS) as (keyof typeof GRANTS)[];

/**
 * POST /oauth/tokens. `password` and the implicit grant were removed (as by
 * Zendesk in 2025): they and anything else are unsupported_grant_type.
 */
export async function tokenEndpoint(deps: OAuthServerDeps, request: ProtocolRequest): Promise<TokenResponse> {
  const grantType = requiredParam(request.params, 'grant_type');
  if (!Object.prototype.hasOwnProperty.call(GRANTS, grantType)) throw new UnsupportedGrantTypeError(`Unsupported grant_type: ${grantType.slice(0, 50)}`);
  const { grant, requireSecret } = GRANTS[grantType as keyof typeof GRANTS];
  const client = await authenticateClient(deps, request, requireSecret);
  return grant(deps, client, request.params, request.origin);
}
