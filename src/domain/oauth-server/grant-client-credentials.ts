import type { AuthenticatedClient } from './client-authentication';
import { LiveLimitError, UnauthorizedClientError } from './oauth-errors';
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
  { client, authenticated, check }: AuthenticatedClient,
  params: Params,
  origin: RequestOrigin,
): Promise<TokenResponse> {
  if (client.clientType !== 'confidential' || !authenticated) throw new UnauthorizedClientError('client_credentials is for confidential clients only');
  const scopes = grantedScopes(param(params, 'scope'), client.scopes);
  const expiresIn = lifetimeParam(params, 'expires_in', ACCESS_LIFETIME);
  // one statement: the cached client's check, the live-token limit, the token and its audit record (the client's agent is the actor)
  const limit = deps.limits.oauthClientLiveTokens;
  const { record, live, freesAt } = await deps.tokens.issueForClient(client, client.id, scopes, newGrantToken(deps.hashKey, expiresIn), {
    origin, description: `Issued by the client_credentials grant for client ${client.id}`,
  }, limit, check);
  if (!record && live >= limit) {
    const retryAfter = Math.max(1, Math.ceil(((freesAt?.getTime() ?? Date.now()) - Date.now()) / 1000));
    throw new LiveLimitError(`This client already holds ${limit} live client_credentials tokens: reuse them until they expire`, retryAfter);
  }
  if (!record) throw new UnauthorizedClientError('The admin who created this client is no longer an active user');
  return tokenResponse(record, { expiresIn });
}
