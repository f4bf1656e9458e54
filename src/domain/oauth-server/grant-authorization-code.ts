import { hmacHex } from '../crypto';
import type { AuthenticatedClient } from './client-authentication';
import { InvalidGrantError, InvalidRequestError } from './oauth-errors';
import { lifetimeParam, param, requiredParam, type Params } from './params';
import type { RequestOrigin } from '../auth/viewer';
import { VERIFIER, verifierMatches } from './pkce';
import { tokenResponse, type TokenResponse } from './token-response';
import { tenantTransaction } from '../../db/tenant-sql';
import { ACCESS_LIFETIME, REFRESH_LIFETIME, newGrantToken, revokeFamily, type OAuthServerDeps } from './oauth-server.deps';

/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is
 * used in a transaction that also issues the token, so of two processes
 * redeeming it at once exactly one gets a token; the other finds it used, which
 * revokes every token of its grant (RFC 6749 §4.1.2). A request that fails a
 * check (client, redirect_uri, PKCE, expiry) rolls back and leaves the code unused.
 */
export async function authorizationCodeGrant(deps: OAuthServerDeps, { client }: AuthenticatedClient, params: Params, origin: RequestOrigin): Promise<TokenResponse> {
  const code = requiredParam(params, 'code');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const verifier = param(params, 'code_verifier');
  if (verifier !== undefined && !VERIFIER.test(verifier)) throw new InvalidRequestError('code_verifier must be 43 to 128 characters of [A-Za-z0-9._~-]');
  const expiresIn = lifetimeParam(params, 'expires_in', ACCESS_LIFETIME);
  const refreshExpiresIn = lifetimeParam(params, 'refresh_token_expires_in', REFRESH_LIFETIME);
  const material = newGrantToken(deps.hashKey, expiresIn, refreshExpiresIn);

  const outcome = await tenantTransaction(deps.db, async (sql) => {
    const tx = deps.repos(sql);
    // a code of another client is not found: invalid_grant, and its grant is left alone
    const { consumed, replayed } = await tx.codes.consume(client, hmacHex(deps.hashKey, code), client.id);
    if (replayed !== undefined) return { replayed };
    if (!consumed) throw new InvalidGrantError('The authorization code is invalid');
    if (consumed.expired) throw new InvalidGrantError('The authorization code has expired');
    if (consumed.redirectUri !== redirectUri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
    if (consumed.codeChallenge === null) {
      // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade attempt
      if (verifier !== undefined) throw new InvalidGrantError('code_verifier sent for an authorization request without code_challenge');
      if (client.clientType === 'public') throw new InvalidGrantError('PKCE is required for public clients');
    } else if (verifier === undefined || !verifierMatches(verifier, consumed.codeChallenge)) {
      throw new InvalidGrantError('code_verifier does not match the code_challenge');
    }
    // the token's audit record (its user is the actor) is written by the same statement
    const record = await tx.grantTokens.issueForGrant(client, consumed.grantId, 'authorization_code', material, {
      origin, description: `Issued by the authorization_code grant for client ${client.id}`,
    }, consumed.scopes);
    if (!record) throw new InvalidGrantError('The grant was revoked or its user is no longer active');
    return { record };
  });
  if (outcome.replayed !== undefined) {
    await revokeFamily(deps, { accountId: client.accountId, grantId: outcome.replayed }, {
      origin, description: `Revoked with its grant: the authorization code that issued it was presented again (client ${client.id})`,
    });
    throw new InvalidGrantError('The authorization code was already used; every token issued from it is revoked');
  }
  return tokenResponse(outcome.record!, { expiresIn, refreshExpiresIn });
}
