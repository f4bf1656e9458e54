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

/** Re-checks what validateAuthorizationRequest checked (a page cannot issue a code for a request that was never valid): the scopes granted. */
function checkedScopes(input: IssueAuthorizationCodeInput): string[] {
  const { client } = input;
  if (!client.redirectUris.includes(input.redirectUri)) throw new InvalidRequestError('redirect_uri is not registered for this client');
  const scopes = grantedScopes(Array.isArray(input.scope) ? input.scope.join(' ') : input.scope, client.scopes);
  if (input.codeChallenge !== undefined && (input.codeChallengeMethod !== 'S256' || !S256_CHALLENGE.test(input.codeChallenge))) {
    throw new InvalidRequestError('code_challenge_method must be S256');
  }
  if (input.codeChallenge === undefined && client.clientType === 'public') throw new InvalidRequestError('PKCE is required for public clients');
  if (input.user.accountId !== client.accountId) throw new AccessDeniedError('The user does not belong to the account of this client');
  return scopes;
}

const liveLimitError = (limit: number) =>
  new LiveLimitError(`This user already holds ${limit} live authorizations: revoke some (or let them expire) before authorizing again`);

/** The code's row for a grant (the request's redirect URI and PKCE challenge); `scopes` only for a remembered consent. */
function codeRow(deps: OAuthServerDeps, input: IssueAuthorizationCodeInput, grantId: bigint, code: string, scopes?: string[]) {
  return {
    accountId: input.client.accountId, grantId, clientId: input.client.id, codeHash: hmacHex(deps.hashKey, code), redirectUri: input.redirectUri,
    codeChallenge: input.codeChallenge ?? null, codeChallengeMethod: input.codeChallenge === undefined ? null : ('S256' as const), ...(scopes ? { scopes } : {}),
  };
}

/**
 * The user allowed the request: a new grant (the family of every token it will
 * give) and its authorization code, single use, valid 120 s, stored as a keyed
 * hash. The code is returned this once.
 */
export async function issueAuthorizationCode(deps: OAuthServerDeps, input: IssueAuthorizationCodeInput): Promise<{ code: string; expiresAt: Date }> {
  return (await issue(deps, input, false))!;
}

/**
 * Remembered consent (docs/api.md): when the user already allowed this client every
 * scope asked for (a live grant, none of its tokens revoked but by rotation), a code
 * of THAT grant (one entry per app in the user's list; revoking it ends every token
 * it gave), whose token gets the scopes asked for; null when there is no such grant
 * (the consent page is shown). The same checks as issueAuthorizationCode, the same
 * per-user limit of live authorizations.
 */
export function issueRememberedCode(deps: OAuthServerDeps, input: IssueAuthorizationCodeInput): Promise<{ code: string; expiresAt: Date } | null> {
  return issue(deps, input, true);
}

async function issue(deps: OAuthServerDeps, input: IssueAuthorizationCodeInput, remembered: boolean): Promise<{ code: string; expiresAt: Date } | null> {
  const { client } = input;
  const scopes = checkedScopes(input);
  const code = randomUrlSafe(32);
  const expiresAt = await tenantTransaction(deps.db, async (sql) => {
    const tx = deps.repos(sql);
    const limit = deps.limits.oauthUserLiveGrants;
    const row = { clientId: client.id, accountId: client.accountId, userId: input.user.userId, scopes };
    if (remembered) {
      const { id, live } = await tx.grants.findRemembered(row, limit);
      if (id === null) return null;
      if (live >= limit) throw liveLimitError(limit);
      // null only in a race with the grant's deletion: the consent page then
      return tx.codes.insert(codeRow(deps, input, id, code, scopes));
    }
    const { id: grantId, live } = await tx.grants.insert(row, limit);
    if (grantId === null && live >= limit) throw liveLimitError(limit);
    if (grantId === null) throw new AccessDeniedError('The user is not an active user of the account of this client');
    const stored = await tx.codes.insert(codeRow(deps, input, grantId, code));
    // the grant was created just above, in this account: always found
    if (stored === null) throw new AccessDeniedError('The grant of this authorization is gone');
    return stored;
  });
  return expiresAt === null ? null : { code, expiresAt };
}
