import type { OAuthClientRecord } from '../oauth-clients/oauth-client.service';
import { InvalidRequestError, OAuthError, UnsupportedResponseTypeError } from './oauth-errors';
import { param, type Params } from './params';
import { S256_CHALLENGE } from './pkce';
import { grantedScopes } from './scope-request';
import type { OAuthServerDeps } from './oauth-server.deps';

// The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3), checked before any
// page is shown. How the pages (GET /oauth/authorizations/new, login, consent)
// use this module and authorization-code.ts:
//
//   const check = await services.oauthServer.validateAuthorizationRequest(request.query);
//   if (!check.ok && check.show === 'page')      → render an error page with check.error (never redirect:
//                                                   the client or its redirect_uri is not trusted)
//   if (!check.ok && check.show === 'redirect')  → 302 to authorizationResponseUrl(check.redirectUri,
//                                                   { ...check.error.toJSON(), state: check.state, iss })
//   otherwise log the user in (viewer), show consent for check.request (client.name, client.company, scopes), then
//     Deny  → 302 to authorizationResponseUrl(redirectUri, { error: 'access_denied', state, iss })
//     Allow → const { code } = await services.oauthServer.issueAuthorizationCode({ ...check.request, user: viewer });
//             302 to authorizationResponseUrl(redirectUri, { code, state, iss })   (iss: RFC 9207, the issuer of the metadata)
// issueAuthorizationCode throws AccessDeniedError when the user is not an active
// user of the client's account: redirect with that error as with Deny.

export interface AuthorizationRequest {
  client: OAuthClientRecord;
  /** exactly one of the client's registered redirect URIs */
  redirectUri: string;
  /** granted scopes: valid, within the client's, the client's when none were asked for */
  scope: string[];
  state?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256';
}

export type AuthorizationRequestCheck =
  | { ok: true; request: AuthorizationRequest }
  /** unknown client, or a redirect_uri that is missing or not registered: show an error page, never redirect */
  | { ok: false; show: 'page'; error: OAuthError }
  /** any other error: redirect to redirectUri with error, error_description and state */
  | { ok: false; show: 'redirect'; error: OAuthError; redirectUri: string; state?: string };

const MAX_STATE_LENGTH = 1000;

/** One parameter, or the error it makes (a repeated or non-string parameter is invalid_request). */
function read(query: Params, name: string): { value?: string; error?: OAuthError } {
  try {
    return { value: param(query, name) };
  } catch (err) {
    if (err instanceof OAuthError) return { error: err };
    throw err;
  }
}

/**
 * `subdomain`: the account host the request came on (docs/api.md "Accounts and
 * hosts"). There, a client of another account is an unknown client: an error page,
 * never its name on a sign-in page nor a redirect to its URIs from this host.
 */
export async function validateAuthorizationRequest(deps: OAuthServerDeps, query: Params, subdomain?: string): Promise<AuthorizationRequestCheck> {
  const page = (description: string): AuthorizationRequestCheck => ({ ok: false, show: 'page', error: new InvalidRequestError(description) });
  const clientId = read(query, 'client_id');
  if (clientId.error || clientId.value === undefined || !/^[\x21-\x7e]{1,200}$/.test(clientId.value)) return page('Missing or invalid client_id');
  const found = await deps.clients.findForGrant(clientId.value, undefined, subdomain);
  if (!found) return page('Unknown client');
  const client = found.client;
  const redirect = read(query, 'redirect_uri');
  if (redirect.error || redirect.value === undefined) return page('Missing or repeated redirect_uri');
  // Exact string match with a registered URI: no prefix, subdomain, path, port or query variations.
  if (!client.redirectUris.includes(redirect.value)) return page('redirect_uri is not registered for this client');
  const redirectUri = redirect.value;

  const stateParam = read(query, 'state');
  const state = stateParam.value !== undefined && stateParam.value.length <= MAX_STATE_LENGTH ? stateParam.value : undefined;
  const fail = (error: OAuthError): AuthorizationRequestCheck => ({ ok: false, show: 'redirect', error, redirectUri, state });
  if (stateParam.error) return fail(stateParam.error);
  if (state === undefined && stateParam.value !== undefined) return fail(new InvalidRequestError(`state is limited to ${MAX_STATE_LENGTH} characters`));

  const responseType = read(query, 'response_type');
  if (responseType.error) return fail(responseType.error);
  if (responseType.value === undefined) return fail(new InvalidRequestError('response_type is required'));
  if (responseType.value !== 'code') return fail(new UnsupportedResponseTypeError('Only response_type=code is supported'));

  const scopeParam = read(query, 'scope');
  if (scopeParam.error) return fail(scopeParam.error);
  let scope: string[];
  try {
    scope = grantedScopes(scopeParam.value, client.scopes);
  } catch (err) {
    if (err instanceof OAuthError) return fail(err);
    throw err;
  }

  const challenge = read(query, 'code_challenge');
  const method = read(query, 'code_challenge_method');
  if (challenge.error) return fail(challenge.error);
  if (method.error) return fail(method.error);
  if (challenge.value === undefined) {
    if (method.value !== undefined) return fail(new InvalidRequestError('code_challenge_method without code_challenge'));
    if (client.clientType === 'public') return fail(new InvalidRequestError('PKCE is required for public clients: send code_challenge with code_challenge_method=S256'));
    return { ok: true, request: { client, redirectUri, scope, state } };
  }
  // RFC 7636 makes an absent method mean "plain", which is refused.
  if (method.value !== 'S256') return fail(new InvalidRequestError('code_challenge_method must be S256 (plain is not supported)'));
  if (!S256_CHALLENGE.test(challenge.value)) return fail(new InvalidRequestError('code_challenge must be 43 base64url characters (S256)'));
  return { ok: true, request: { client, redirectUri, scope, state, codeChallenge: challenge.value, codeChallengeMethod: 'S256' } };
}

/**
 * The redirect back to the client (RFC 6749 §4.1.2): the registered URI as it is,
 * its own query kept, with the response parameters appended.
 */
export function authorizationResponseUrl(redirectUri: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${query.toString()}`;
}
