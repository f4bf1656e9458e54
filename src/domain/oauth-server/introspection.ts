import { hmacHex } from '../crypto';
import { withClient, type ProtocolRequest } from './client-authentication';
import type { PresentedHashRow } from '../oauth-tokens/oauth-token.types';
import { requiredParam } from './params';
import type { OAuthServerDeps } from './oauth-server.deps';

export type IntrospectionResponse =
  | { active: false }
  | { active: true; scope: string; client_id: string; username: string; sub: string; exp?: number; iat: number; token_type: 'bearer' | 'refresh_token' };

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * POST /oauth/introspect (RFC 7662), for clients that authenticate with a secret.
 * A token is shown only to clients of its own account; anything not live
 * (unknown, expired, revoked, rotated, of an inactive user, of another account)
 * is {"active": false}.
 */
export async function introspectionEndpoint(deps: OAuthServerDeps, request: ProtocolRequest): Promise<IntrospectionResponse> {
  return withClient(deps, request, true, async ({ client, check }) => {
    const token = requiredParam(request.params, 'token');
    // one statement: the token, and the cached client's check (StaleClientError when it fails)
    return introspected(client.accountId, await deps.tokens.findByEitherHash(client, hmacHex(deps.hashKey, token), check));
  });
}

function introspected(accountId: bigint, found: PresentedHashRow | null): IntrospectionResponse {
  if (!found || !found.live || found.accountId !== accountId) return { active: false };
  const body: IntrospectionResponse = {
    active: true,
    scope: found.scopes.join(' '),
    client_id: found.clientIdentifier ?? '',
    username: found.email,
    sub: String(found.userId),
    iat: seconds(found.createdAt),
    token_type: found.kind === 'access' ? 'bearer' : 'refresh_token',
  };
  if (found.expiresAt) body.exp = seconds(found.expiresAt);
  return body;
}
