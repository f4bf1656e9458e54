import type { OAuthClientRecord } from '../oauth-clients/oauth-client.service';
import { StaleClientError, type ClientCheck } from '../oauth-clients/client-grant-cache';
import type { RequestOrigin } from '../auth/viewer';
import { InvalidClientError, InvalidRequestError } from './oauth-errors';
import { param, type Params } from './params';
import type { OAuthServerDeps } from './oauth-server.deps';

// Client authentication at the grant, revocation and introspection endpoints
// (RFC 6749 §2.3.1): client_id + client_secret in the body, or HTTP Basic with
// both form-urlencoded first. Exactly one method. A public client may identify
// itself with client_id alone.

export interface ProtocolRequest {
  /** the Authorization header, if any */
  authorization?: string;
  params: Params;
  /** via 'oauth', the request id and the remote address: the audit log's origin of what the request changes */
  origin: RequestOrigin;
  /** the account host the request came on: a client of another account is unknown there */
  subdomain?: string;
}

export interface AuthenticatedClient {
  client: OAuthClientRecord;
  /** a live secret of the client was presented */
  authenticated: boolean;
  viaBasic: boolean;
  /** the client came from the grant cache: the statement that uses it checks this first (clientCheckSql), and throws StaleClientError when it no longer holds */
  check?: ClientCheck;
}


const IDENTIFIER = /^[\x21-\x7e]{1,200}$/;

function formDecode(value: string, viaBasic: boolean): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new InvalidClientError('Malformed client credentials in the Authorization header', viaBasic);
  }
}

function basicCredentials(header: string): { id: string; secret: string } {
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header.trim());
  const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new InvalidClientError('Client authentication failed: use HTTP Basic with client_id:client_secret', true);
  return { id: formDecode(decoded.slice(0, colon), true), secret: formDecode(decoded.slice(colon + 1), true) };
}

/**
 * The client of a protocol request. `requireSecret`: a client without a live
 * secret presented is refused (introspection, client_credentials); otherwise a
 * confidential client must present one and a public client may not.
 */
export async function authenticateClient(deps: OAuthServerDeps, request: ProtocolRequest, requireSecret = false, cached = false): Promise<AuthenticatedClient> {
  const viaBasic = request.authorization !== undefined && request.authorization.trim() !== '';
  const bodyId = param(request.params, 'client_id');
  const bodySecret = param(request.params, 'client_secret');
  let id = bodyId;
  let secret = bodySecret;
  if (viaBasic) {
    const basic = basicCredentials(request.authorization!);
    if (bodySecret !== undefined) throw new InvalidRequestError('Use one client authentication method: HTTP Basic or client_secret in the body, not both');
    if (bodyId !== undefined && bodyId !== basic.id) throw new InvalidRequestError('client_id in the body differs from the one in the Authorization header');
    id = basic.id;
    secret = basic.secret === '' ? undefined : basic.secret;
  }
  if (id === undefined) throw new InvalidClientError('Client authentication failed: client_id is required', viaBasic);
  if (!IDENTIFIER.test(id)) throw new InvalidClientError('Client authentication failed', viaBasic);
  const found = await deps.clients.findForGrant(id, secret, request.subdomain, cached);
  if (!found) throw new InvalidClientError('Client authentication failed', viaBasic);
  if (secret !== undefined && !found.secretMatched) throw new InvalidClientError('Client authentication failed', viaBasic);
  if (!found.secretMatched && (requireSecret || found.client.clientType === 'confidential')) {
    throw new InvalidClientError('Client authentication failed: this client must authenticate with its client_secret', viaBasic);
  }
  return { client: found.client, authenticated: found.secretMatched, viaBasic, check: found.check };
}

/**
 * Runs `use` with the request's client, from the grant cache when it holds it
 * (client-grant-cache.ts); when the statement finds the cached client changed, once
 * more with the client looked up again, as without the cache.
 */
export async function withClient<T>(
  deps: OAuthServerDeps, request: ProtocolRequest, requireSecret: boolean, use: (client: AuthenticatedClient) => Promise<T>,
): Promise<T> {
  const client = await authenticateClient(deps, request, requireSecret, true);
  try {
    return await use(client);
  } catch (err) {
    if (!(err instanceof StaleClientError)) throw err;
    deps.clients.forgetForGrant(client.client.identifier, request.subdomain);
    return use(await authenticateClient(deps, request, requireSecret, false));
  }
}
