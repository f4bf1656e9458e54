import * as oauth from 'oauth4webapi';
import { s256 } from '../src/domain/oauth-server/pkce';
import { INSECURE, REDIRECT, RFC7636, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';

// The flows of the authorization server (docs/api.md, "OAuth 2.0 authorization server")
// driven end to end by oauth4webapi, an OpenID-certified client library, against
// the service listening on 127.0.0.1. The authorization code comes from the
// domain functions the authorization pages call.

describe('OAuth 2.0 flows with oauth4webapi', () => {
  let s: OAuthStack;
  let confidential: RegisteredClient;
  let publicClient: RegisteredClient;

  beforeAll(async () => {
    s = await startOAuthStack();
    confidential = await s.register({ type: 'confidential' });
    publicClient = await s.register({ type: 'public' });
  });
  afterAll(() => s.close());

  const codeFlow = async (c: RegisteredClient, auth: oauth.ClientAuth, verifier = oauth.generateRandomCodeVerifier(), scope?: string) => {
    const callback = await s.authorize(c, { verifier, state: 'xyz', scope });
    const params = oauth.validateAuthResponse(s.as, c.client, callback, 'xyz');
    const res = await oauth.authorizationCodeGrantRequest(s.as, c.client, auth, params, REDIRECT, verifier, INSECURE);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return oauth.processAuthorizationCodeResponse(s.as, c.client, res);
  };

  it('discovers the metadata (RFC 8414): issuer is the base URL, S256 only, every endpoint listed', () => {
    expect(s.as).toMatchObject({
      issuer: s.base,
      authorization_endpoint: `${s.base}/oauth/authorizations/new`,
      token_endpoint: `${s.base}/oauth/tokens`,
      revocation_endpoint: `${s.base}/oauth/revoke`,
      introspection_endpoint: `${s.base}/oauth/introspect`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(s.as.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(['client_secret_basic', 'client_secret_post']));
  });

  it('RFC 7636 Appendix B: the verifier hashes to its challenge, and that pair redeems a code', async () => {
    expect(s256(RFC7636.verifier)).toBe(RFC7636.challenge);
    expect(await oauth.calculatePKCECodeChallenge(RFC7636.verifier)).toBe(RFC7636.challenge);
    const tokens = await codeFlow(confidential, oauth.ClientSecretBasic(confidential.secret), RFC7636.verifier);
    expect(tokens.token_type).toBe('bearer');
  });

  it('authorization code + PKCE for a public client: tokens that act as the consenting user, shown by /api/v2/oauth/tokens', async () => {
    const tokens = await codeFlow(publicClient, oauth.None());
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read write', expires_in: 1800, refresh_token_expires_in: 2_592_000 });
    expect(tokens.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const current = await s.current(tokens.access_token);
    expect(current.status).toBe(200);
    const t = current.body.token;
    expect(t).toMatchObject({ user_id: Number(s.agent.id), client_id: publicClient.id, scopes: ['read', 'write'], token: tokens.access_token.slice(0, 10), refresh_token: tokens.refresh_token!.slice(0, 10) });
    const expires = Date.parse(t.expires_at) - Date.now();
    expect(expires).toBeGreaterThan(1790_000);
    expect(expires).toBeLessThanOrEqual(1800_000);
    expect(Date.parse(t.refresh_token_expires_at) - Date.now()).toBeGreaterThan(2_591_000_000);
    // and GraphQL
    const gql = await s.ctx.graphql('{ currentOAuthToken { grantType expiresAt refreshToken refreshTokenExpiresAt } }', {}, { authorization: `Bearer ${tokens.access_token}` });
    expect(gql.json().data.currentOAuthToken).toMatchObject({ grantType: 'AUTHORIZATION_CODE', refreshToken: tokens.refresh_token!.slice(0, 10) });
    // the admin sees it in the list of every token of the account, with its expiry
    const list = await s.ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens.json?all=true&client_id=${publicClient.id}`, headers: { authorization: s.admin.basic } });
    expect(list.json().tokens.map((x: { id: number; expires_at: string | null }) => [x.id, x.expires_at])).toEqual([[t.id, t.expires_at]]);
  });

  it('a narrower scope is granted as asked; the client credentials as the body (client_secret_post)', async () => {
    const tokens = await codeFlow(confidential, oauth.ClientSecretPost(confidential.secret), undefined, 'read');
    expect(tokens.scope).toBe('read');
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    expect((await s.ctx.graphql('{ currentOAuthToken { scopes } }', {}, bearer)).json().data.currentOAuthToken.scopes).toEqual(['read']);
    // read only: a write is refused
    const write = await s.ctx.inject({ method: 'DELETE', url: '/api/v2/oauth/tokens/999999', headers: bearer });
    expect(write.statusCode).toBe(403);
  });

  it('refresh rotates: a new pair, the old access and refresh tokens die; replaying the old refresh token revokes the family', async () => {
    const first = await codeFlow(publicClient, oauth.None());
    const res = await oauth.refreshTokenGrantRequest(s.as, publicClient.client, oauth.None(), first.refresh_token!, INSECURE);
    const second = await oauth.processRefreshTokenResponse(s.as, publicClient.client, res);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await s.current(first.access_token)).status).toBe(401);
    const now = await s.current(second.access_token);
    expect(now.status).toBe(200);
    const gql = await s.ctx.graphql('{ currentOAuthToken { grantType } }', {}, { authorization: `Bearer ${second.access_token}` });
    expect(gql.json().data.currentOAuthToken.grantType).toBe('REFRESH_TOKEN');

    // replay: refused, and every token of the grant is revoked
    const replay = await oauth.refreshTokenGrantRequest(s.as, publicClient.client, oauth.None(), first.refresh_token!, INSECURE);
    await expect(oauth.processRefreshTokenResponse(s.as, publicClient.client, replay)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await s.current(second.access_token)).status).toBe(401);
    const again = await oauth.refreshTokenGrantRequest(s.as, publicClient.client, oauth.None(), second.refresh_token!, INSECURE);
    await expect(oauth.processRefreshTokenResponse(s.as, publicClient.client, again)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('client credentials: a confidential client gets a token that acts as the admin who created it, without refresh token', async () => {
    const res = await oauth.clientCredentialsGrantRequest(s.as, confidential.client, oauth.ClientSecretBasic(confidential.secret), { scope: 'read' }, INSECURE);
    const tokens = await oauth.processClientCredentialsResponse(s.as, confidential.client, res);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read', expires_in: 1800 });
    expect(tokens.refresh_token).toBeUndefined();
    const current = await s.current(tokens.access_token);
    expect(current.body.token).toMatchObject({ user_id: Number(s.admin.id), scopes: ['read'], refresh_token: null, refresh_token_expires_at: null });
    // a public client may not
    const pub = await oauth.clientCredentialsGrantRequest(s.as, publicClient.client, oauth.None(), {}, INSECURE);
    await expect(oauth.processClientCredentialsResponse(s.as, publicClient.client, pub)).rejects.toMatchObject({ error: 'unauthorized_client' });
  });

  it('introspection (RFC 7662): live tokens in full for an authenticated client, {"active": false} for anything else', async () => {
    const tokens = await codeFlow(publicClient, oauth.None());
    const auth = oauth.ClientSecretBasic(confidential.secret);
    const introspect = async (token: string) =>
      oauth.processIntrospectionResponse(s.as, confidential.client, await oauth.introspectionRequest(s.as, confidential.client, auth, token, INSECURE));
    const live = await introspect(tokens.access_token);
    expect(live).toMatchObject({
      active: true, scope: 'read write', client_id: publicClient.identifier, username: s.agent.email, sub: String(s.agent.id), token_type: 'bearer',
    });
    expect(live.exp! - Math.floor(Date.now() / 1000)).toBeGreaterThan(1790);
    expect(Math.abs(live.iat! - Math.floor(Date.now() / 1000))).toBeLessThan(60);
    expect(await introspect(tokens.refresh_token!)).toMatchObject({ active: true, token_type: 'refresh_token' });
    expect(await introspect('no-such-token-0123456789012345678901234567')).toEqual({ active: false });
    // a client must authenticate with a secret to introspect
    const anonymous = await oauth.introspectionRequest(s.as, publicClient.client, oauth.None(), tokens.access_token, INSECURE);
    await expect(oauth.processIntrospectionResponse(s.as, publicClient.client, anonymous)).rejects.toMatchObject({ error: 'invalid_client' });
  });

  it('revocation (RFC 7009): an access token dies with its refresh token; a refresh token takes its family; unknown tokens are fine', async () => {
    const a = await codeFlow(publicClient, oauth.None());
    await oauth.processRevocationResponse(await oauth.revocationRequest(s.as, publicClient.client, oauth.None(), a.access_token, INSECURE));
    expect((await s.current(a.access_token)).status).toBe(401);
    const refresh = await oauth.refreshTokenGrantRequest(s.as, publicClient.client, oauth.None(), a.refresh_token!, INSECURE);
    await expect(oauth.processRefreshTokenResponse(s.as, publicClient.client, refresh)).rejects.toMatchObject({ error: 'invalid_grant' });

    const b = await codeFlow(publicClient, oauth.None());
    const rotated = await oauth.processRefreshTokenResponse(
      s.as, publicClient.client, await oauth.refreshTokenGrantRequest(s.as, publicClient.client, oauth.None(), b.refresh_token!, INSECURE),
    );
    await oauth.processRevocationResponse(await oauth.revocationRequest(s.as, publicClient.client, oauth.None(), rotated.refresh_token!, INSECURE));
    expect((await s.current(rotated.access_token)).status).toBe(401);

    await oauth.processRevocationResponse(await oauth.revocationRequest(s.as, publicClient.client, oauth.None(), 'never-issued-token-abcdefghijklmnopqrstuvwxyz', INSECURE));
  });
});
