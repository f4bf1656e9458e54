import * as oauth from 'oauth4webapi';
import { insertToken } from './helpers/test-app';
import { INSECURE, REDIRECT, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';

// docs/api.md "OAuth tokens": a token that creates a token (POST /api/v2/oauth/tokens,
// createOAuthToken) hands out at most its own access, for at most its own life: the
// minted token gets only scopes the minter covers, expires when the minter does, and
// dies with the minter's grant. A password sign-in (Basic) keeps Zendesk's behaviour.

describe('a token minted with a token is never wider or longer-lived than its minter', () => {
  let s: OAuthStack;
  let app: RegisteredClient;
  let target: RegisteredClient;

  beforeAll(async () => {
    s = await startOAuthStack();
    app = await s.register({ type: 'confidential' });
    target = await s.register({ type: 'confidential' });
  });
  afterAll(() => s.close());

  const mint = (authorization: string, scopes: unknown, clientId = target.id) =>
    s.ctx.inject({
      method: 'POST', url: '/api/v2/oauth/tokens', headers: { authorization, 'content-type': 'application/json' },
      payload: { token: { client_id: clientId, scopes } },
    });
  const bearer = (token: string) => `Bearer ${token}`;

  /** The admin's tokens from the authorization-code flow of `app`, with the given scope. */
  async function appTokens(scope: string) {
    const verifier = oauth.generateRandomCodeVerifier();
    const callback = await s.authorize(app, { user: s.admin, verifier, scope, state: 'st' });
    const params = oauth.validateAuthResponse(s.as, app.client, callback, 'st');
    const res = await oauth.authorizationCodeGrantRequest(s.as, app.client, oauth.ClientSecretBasic(app.secret), params, REDIRECT, verifier, INSECURE);
    return oauth.processAuthorizationCodeResponse(s.as, app.client, res);
  }

  it("an admin's write-only token cannot mint read or impersonate: 422 naming them, and nothing stored", async () => {
    const minter = await insertToken(s.ctx, s.admin, { scopes: ['write'] });
    const before = await s.ctx.db.prisma.oAuthToken.count();
    const res = await mint(bearer(minter.token), ['read', 'write', 'impersonate']);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      error: 'RecordInvalid', description: 'Record validation errors',
      details: { scopes: [{ error: 'InvalidValue', description: 'Scopes: read, impersonate are beyond the access of the token making the request' }] },
    });
    expect(await s.ctx.db.prisma.oAuthToken.count()).toBe(before);
  });

  it('a token mints what it covers: its own scopes and narrower ones; not a bare resource it can only write', async () => {
    const minter = await insertToken(s.ctx, s.admin, { scopes: ['read', 'write'] });
    const ok = await mint(bearer(minter.token), ['write', 'users:read', 'tickets']);
    expect(ok.statusCode).toBe(201);
    expect(ok.json().token).toMatchObject({ scopes: ['write', 'users:read', 'tickets'], expires_at: null, user_id: Number(s.admin.id) });
    // the minted token works
    expect((await s.current(ok.json().token.token)).status).toBe(200);

    const writer = await insertToken(s.ctx, s.admin, { scopes: ['write'] });
    const bare = await mint(bearer(writer.token), ['users']);
    expect([bare.statusCode, bare.json().details.scopes[0].description]).toEqual([422, 'Scopes: users are beyond the access of the token making the request']);
    // invalid scopes are beyond any token: only a password sign-in may store them (docs/api.md, "Scopes and roles")
    const invalid = await mint(bearer(minter.token), ['tickets:delete']);
    expect(invalid.statusCode).toBe(422);
    const byPassword = await mint(s.admin.basic, ['read', 'tickets:delete', 'impersonate']);
    expect([byPassword.statusCode, byPassword.json().token.scopes]).toEqual([201, ['read', 'tickets:delete', 'impersonate']]);
  });

  it('a token whose client only writes cannot mint read; a token with impersonate can mint impersonate', async () => {
    const capped = await insertToken(s.ctx, s.admin, { scopes: ['read', 'write', 'impersonate'], clientScopes: 'write' });
    const res = await mint(bearer(capped.token), ['read', 'write', 'impersonate']);
    expect([res.statusCode, res.json().details?.scopes[0].description]).toEqual([422, 'Scopes: read are beyond the access of the token making the request']);
    const ok = await mint(bearer(capped.token), ['write', 'impersonate']);
    expect(ok.statusCode).toBe(201);
  });

  it("an app's token mints a token that expires with it and dies when the app's grant is revoked", async () => {
    const tokens = await appTokens('write');
    const wide = await mint(bearer(tokens.access_token), ['read', 'write', 'impersonate']);
    expect(wide.statusCode).toBe(422);

    const res = await mint(bearer(tokens.access_token), ['write']);
    expect(res.statusCode).toBe(201);
    const minted = res.json().token;
    const minter = (await s.current(tokens.access_token)).body.token;
    expect(minted.expires_at).not.toBeNull();
    expect(Date.parse(minted.expires_at)).toBeLessThanOrEqual(Date.parse(minter.expires_at));
    expect((await s.current(minted.token)).status).toBe(200);

    // the app's grant is revoked with its refresh token: the minted token goes with it
    const revoke = await oauth.revocationRequest(s.as, app.client, oauth.ClientSecretBasic(app.secret), tokens.refresh_token!, INSECURE);
    await oauth.processRevocationResponse(revoke);
    expect((await s.current(tokens.access_token)).status).toBe(401);
    expect((await s.current(minted.token)).status).toBe(401);
  });

  it("deleting the app's client ends a token minted with the app's token, even for another client", async () => {
    const doomed = await s.register({ type: 'confidential' });
    const verifier = oauth.generateRandomCodeVerifier();
    const callback = await s.authorize(doomed, { user: s.admin, verifier, scope: 'read write', state: 'st' });
    const params = oauth.validateAuthResponse(s.as, doomed.client, callback, 'st');
    const granted = await oauth.processAuthorizationCodeResponse(
      s.as, doomed.client,
      await oauth.authorizationCodeGrantRequest(s.as, doomed.client, oauth.ClientSecretBasic(doomed.secret), params, REDIRECT, verifier, INSECURE),
    );
    const minted = await mint(bearer(granted.access_token), ['read']);
    expect(minted.statusCode).toBe(201);
    const del = await s.ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/clients/${doomed.id}`, headers: { authorization: s.admin.basic } });
    expect(del.statusCode).toBe(204);
    expect((await s.current(minted.json().token.token)).status).toBe(401);
  });

  it('GraphQL createOAuthToken follows the same rule', async () => {
    const minter = await insertToken(s.ctx, s.admin, { scopes: ['write'] });
    const query = 'mutation($input: CreateOAuthTokenInput!) { createOAuthToken(input: $input) { id scopes expiresAt } }';
    const wide = await s.ctx.graphql(query, { input: { clientId: String(target.id), scopes: ['write', 'impersonate'] } }, { authorization: bearer(minter.token) });
    expect(wide.json().errors[0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT', details: { scopes: [{ error: 'InvalidValue', description: 'Scopes: impersonate are beyond the access of the token making the request' }] },
    });
    const ok = await s.ctx.graphql(query, { input: { clientId: String(target.id), scopes: ['write'] } }, { authorization: bearer(minter.token) });
    expect(ok.json().data.createOAuthToken).toMatchObject({ scopes: ['write'], expiresAt: null });
  });
});
