import { hmacHex } from '../crypto';
import { authenticateClient, type ProtocolRequest } from './client-authentication';
import { requiredParam } from './params';
import { revokeFamily, type OAuthServerDeps } from './oauth-server.deps';

/**
 * POST /oauth/revoke (RFC 7009). An access token dies with its refresh token; a
 * refresh token revokes its whole grant. Answers 200 for an unknown token, and
 * for another client's token (which it leaves alone), so that nothing about other
 * tokens can be learnt here. token_type_hint is not needed: both are looked up at once.
 */
export async function revocationEndpoint(deps: OAuthServerDeps, request: ProtocolRequest): Promise<void> {
  const { client } = await authenticateClient(deps, request);
  const token = requiredParam(request.params, 'token');
  const found = await deps.tokens.findByEitherHash(client, hmacHex(deps.hashKey, token));
  if (!found || found.clientId !== client.id) return;
  // the actor: the user the token acts as, whose client asked
  const by = { userId: found.userId, name: found.name };
  if (found.kind === 'refresh' && found.grantId !== null) {
    await revokeFamily(deps, { accountId: found.accountId, grantId: found.grantId }, { origin: request.origin, by, description: `Revoked with its grant at /oauth/revoke (a refresh token, client ${client.id})` });
  } else {
    await deps.tokens.revokeById(client, found.id, {
      actor: { accountId: found.accountId, actorId: by.userId, actorName: by.name, origin: request.origin },
      description: `Revoked at /oauth/revoke (client ${client.id})`,
    });
  }
}
