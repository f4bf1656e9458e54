import { hmacHex } from '../crypto';
import { scopeListProblem } from '../scopes';
import type { AuthenticatedClient } from './client-authentication';
import { InvalidGrantError, InvalidScopeError } from './oauth-errors';
import { lifetimeParam, param, requiredParam, type Params } from './params';
import type { RequestOrigin } from '../auth/viewer';
import { tokenResponse, type TokenResponse } from './token-response';
import { ACCESS_LIFETIME, REFRESH_LIFETIME, newGrantToken, revokeFamily, type OAuthServerDeps } from './oauth-server.deps';

/**
 * grant_type=refresh_token (RFC 6749 §6). Rotates on every use, in one
 * statement: the old access and refresh tokens die, a new pair of the same grant
 * is issued, with the original scopes or fewer. A refresh token presented after
 * it was rotated is a replay: its whole grant is revoked (RFC 9700 §2.2.2).
 */
export async function refreshTokenGrant(deps: OAuthServerDeps, { client, check }: AuthenticatedClient, params: Params, origin: RequestOrigin): Promise<TokenResponse> {
  const presented = requiredParam(params, 'refresh_token');
  const scopeParam = param(params, 'scope');
  const scopes = scopeParam === undefined || scopeParam.trim() === '' ? undefined : [...new Set(scopeParam.trim().split(/\s+/))];
  const problem = scopes && scopeListProblem(scopes);
  if (problem) throw new InvalidScopeError(`scope: ${problem.description}`);
  const expiresIn = lifetimeParam(params, 'expires_in', ACCESS_LIFETIME);
  const refreshExpiresIn = lifetimeParam(params, 'refresh_token_expires_in', REFRESH_LIFETIME);
  const hash = hmacHex(deps.hashKey, presented);

  // one statement: the cached client's check, the rotation and the new token's audit record ("…; rotated token <old id>")
  const record = await deps.tokens.rotateRefresh(client, hash, client.id, scopes, newGrantToken(deps.hashKey, expiresIn, refreshExpiresIn), {
    origin, description: `Issued by the refresh_token grant for client ${client.id}; rotated token `,
  }, check);
  if (record) return tokenResponse(record, { expiresIn, refreshExpiresIn });

  // Nothing rotated: say why (StaleClientError when the cached client no longer holds), and revoke the family of a replayed token.
  const found = await deps.tokens.findByEitherHash(client, hash, check);
  if (!found || found.kind !== 'refresh' || found.clientId !== client.id) throw new InvalidGrantError('The refresh token is invalid');
  if (found.refreshUsed) {
    if (found.grantId !== null) {
      await revokeFamily(deps, { accountId: found.accountId, grantId: found.grantId }, {
        origin, description: `Revoked with its grant: the refresh token of token ${found.id}, rotated already, was presented again (client ${client.id})`,
      });
    }
    throw new InvalidGrantError('The refresh token was already used; every token of its grant is revoked');
  }
  if (found.live && scopes && !scopes.every((s) => found.scopes.includes(s))) throw new InvalidScopeError('The requested scope exceeds the scope originally granted');
  throw new InvalidGrantError('The refresh token is expired or revoked');
}
