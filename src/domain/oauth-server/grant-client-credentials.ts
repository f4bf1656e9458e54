import type { AuthenticatedClient } from './client-authentication';
import { UnauthorizedClientError } from './oauth-errors';
import { lifetimeParam, param, type Params } from './params';
import type { RequestOrigin } from '../auth/viewer';
import { grantedScopes } from './scope-request';
import { tokenResponse, type TokenResponse } from './token-response';
import { ACCESS_LIFETIME, newGrantToken, type OAuthServerDeps } from './oauth-server.deps';

/**
 * grant_type=client_credentials (RFC 6749 §4.4): confidential clients that
 * authenticated with a secret only. The token acts as the admin who created the
 * client (its agent_id), while that user is active. No refresh token (§4.4.3).
 */
export async function clientCredentialsGrant(
  deps: OAuthServerDeps,
  { client, authenticated }: AuthenticatedClient,
  params: Params,
  origin: RequestOrigin,
): Promise<TokenResponse> {
  if (client.clientType !== 'confidential' || !authenticated) throw new UnauthorizedClientError('client_credentials is for confidential clients only');
  const scopes = grantedScopes(param(params, 'scope'), client.scopes);
  const expiresIn = lifetimeParam(params, 'expires_in', ACCESS_LIFETIME);
  // one statement: the token and its audit record (the client's agent is the actor)
  const record = await deps.tokens.issueForClient(client, client.id, scopes, newGrantToken(deps.hashKey, expiresIn), {
    origin, description: `Issued by the client_credentials grant for client ${client.id}`,
  });
  if (!record) throw new UnauthorizedClientError('The admin who created this client is no longer an active user');
  return tokenResponse(record, { expiresIn });
}
