import type { Viewer } from '../auth/viewer';
import type { OAuthClientRecord } from '../oauth-clients/oauth-client.service';
import { hmacHex, randomUrlSafe } from '../crypto';
import { AccessDeniedError, InvalidRequestError, LiveLimitError } from './oauth-errors';
import { S256_CHALLENGE } from './pkce';
import { grantedScopes } from './scope-request';
import { tenantTransaction } from '../../db/tenant-sql';
import type { OAuthServerDeps } from './oauth-server.deps';

export interface IssueAuthorizationCodeInput {
  client: OAuthClientRecord;
  /** the user who consented, logged in on the authorization pages */
  user: Pick<Viewer, 'accountId' | 'userId'>;
  redirectUri: string;
  /** the validated request's scopes (a list, or a space-separated string) */
  scope: string[] | string;
  /** echoed by the page, not stored */
  state?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256';
}

/**
 * The user allowed the request: a new grant (the family of every token it will
 * give) and its authorization code, single use, valid 120 s, stored as a keyed
 * hash. The code is returned this once. Re-checks what validateAuthorizationRequest
 * checked, so a page cannot issue a code for a request that was never valid.
 */
export async function issueAuthorizationCode(deps: OAuthServerDeps, input: IssueAuthorizationCodeInput): Promise<{ code: string; expiresAt: Date }> {
  const { client } = input;
  if (!client.redirectUris.includes(input.redirectUri)) throw new InvalidRequestError('redirect_uri is not registered for this client');
  const scopes = grantedScopes(Array.isArray(input.scope) ? input.scope.join(' ') : input.scope, client.scopes);
  if (input.codeChallenge !== undefined && (input.codeChallengeMethod !== 'S256' || !S256_CHALLENGE.test(input.codeChallenge))) {
    throw new InvalidRequestError('code_challenge_method must be S256');
  }
  if (input.codeChallenge === undefined && client.clientType === 'public') throw new InvalidRequestError('PKCE is required for public clients');
  if (input.user.accountId !== client.accountId) throw new AccessDeniedError('The user does not belong to the account of this client');
  const code = randomUrlSafe(32);
  const expiresAt = await tenantTransaction(deps.db, async (sql) => {
    const tx = deps.repos(sql);
    const limit = deps.limits.oauthUserLiveGrants;
    const { id: grantId, live } = await tx.grants.insert({ clientId: client.id, accountId: client.accountId, userId: input.user.userId, scopes }, limit);
    if (grantId === null && live >= limit) {
      throw new LiveLimitError(`This user already holds ${limit} live authorizations: revoke some (or let them expire) before authorizing again`);
    }
    if (grantId === null) throw new AccessDeniedError('The user is not an active user of the account of this client');
    const stored = await tx.codes.insert({
      accountId: client.accountId, grantId, clientId: client.id, codeHash: hmacHex(deps.hashKey, code), redirectUri: input.redirectUri,
      codeChallenge: input.codeChallenge ?? null, codeChallengeMethod: input.codeChallenge === undefined ? null : 'S256',
    });
    // the grant was created just above, in this account: always found
    if (stored === null) throw new AccessDeniedError('The grant of this authorization is gone');
    return stored;
  });
  return { code, expiresAt };
}
