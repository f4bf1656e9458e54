import * as oauth from 'oauth4webapi';
import type { LightMyRequestResponse } from 'fastify';
import { auditOf } from './helpers/audit';
import { basicHeader, type TestUser } from './helpers/test-app';
import { INSECURE, REDIRECT, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';

// docs/api.md "Users" (Passwords): a password change or reset ends what the old
// password opened: every sign-in session of the authorization pages, and every
// OAuth grant of the user (refresh tokens, their access tokens, and tokens minted
// with them), in the same transaction as the new password, audited. API tokens
// created with POST /api/v2/oauth/tokens stay (GitHub's and Zendesk's choice).

describe('a password change or reset ends sessions and grants', () => {
  let s: OAuthStack;
  let app: RegisteredClient;
  let seq = 0;

  beforeAll(async () => {
    s = await startOAuthStack();
    app = await s.register({ type: 'confidential' });
  });
  afterAll(() => s.close());

  const json = { 'content-type': 'application/json' };
  const setPassword = (user: TestUser, by: string, payload: Record<string, string>) =>
    s.ctx.inject({ method: 'PUT', url: `/api/v2/users/${user.id}/password`, headers: { ...json, authorization: by }, payload });
  const newAdmin = async () => s.ctx.createUser(s.admin.accountId, 'admin', { email: `pw-${++seq}@acme.test`, password: `first-password-${seq}` });

  /** The user's tokens from the authorization-code flow. */
  async function codeFlowTokens(user: TestUser) {
    const verifier = oauth.generateRandomCodeVerifier();
    const callback = await s.authorize(app, { user, verifier, state: 'st' });
    const params = oauth.validateAuthResponse(s.as, app.client, callback, 'st');
    const res = await oauth.authorizationCodeGrantRequest(s.as, app.client, oauth.ClientSecretBasic(app.secret), params, REDIRECT, verifier, INSECURE);
    return oauth.processAuthorizationCodeResponse(s.as, app.client, res);
  }
  const refresh = async (refreshToken: string) =>
    oauth.processRefreshTokenResponse(s.as, app.client, await oauth.refreshTokenGrantRequest(s.as, app.client, oauth.ClientSecretBasic(app.secret), refreshToken, INSECURE));
  const apiToken = async (by: string) => {
    const res = await s.ctx.inject({ method: 'POST', url: '/api/v2/oauth/tokens', headers: { ...json, authorization: by }, payload: { token: { client_id: app.id, scopes: ['read', 'write'] } } });
    expect(res.statusCode).toBe(201);
    return res.json().token as { id: number; token: string };
  };

  describe('grants (refresh families)', () => {
    it("an admin's reset revokes the user's refresh tokens, their access tokens and tokens minted with them, audited; API tokens stay", async () => {
      const user = await newAdmin();
      const granted = await codeFlowTokens(user);
      const minted = await apiToken(`Bearer ${granted.access_token}`);
      const kept = await apiToken(user.basic);
      expect((await s.current(granted.access_token)).status).toBe(200);

      const reset = await setPassword(user, s.admin.basic, { password: 'reset-by-admin-1' });
      expect(reset.statusCode).toBe(200);
      await expect(refresh(granted.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      expect((await s.current(granted.access_token)).status).toBe(401);
      expect((await s.current(minted.token)).status).toBe(401);
      expect((await s.current(kept.token)).status).toBe(200);

      // audited in the reset's transaction: the user's record says how many, each token has its destroy record
      const userAudit = (await auditOf(s.ctx, 'user', user.id)).at(-1)!;
      expect(userAudit).toMatchObject({ changed_fields: ['password'], change_description: 'Password set by an admin; 2 tokens revoked', request_id: reset.headers['x-request-id'] });
      const minteds = await auditOf(s.ctx, 'oauth_token', minted.id);
      expect(minteds.at(-1)).toMatchObject({ action: 'destroy', actor_id: String(s.admin.id), change_description: 'Revoked with its grant: the password of its user changed', request_id: reset.headers['x-request-id'] });
    });

    it("the user's own change revokes them too; another user's grants are untouched", async () => {
      const user = await newAdmin();
      const other = await newAdmin();
      const mine = await codeFlowTokens(user);
      const theirs = await codeFlowTokens(other);
      const res = await setPassword(user, user.basic, { password: 'own-new-password', previous_password: user.password });
      expect(res.statusCode).toBe(200);
      await expect(refresh(mine.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      expect((await s.current(mine.access_token)).status).toBe(401);
      expect((await s.current(theirs.access_token)).status).toBe(200);
      expect((await refresh(theirs.refresh_token!)).access_token).toEqual(expect.any(String));
      expect((await auditOf(s.ctx, 'user', user.id)).at(-1)).toMatchObject({ change_description: 'Changed their password; 1 token revoked' });
    });
  });

  describe('sign-in sessions of the authorization pages', () => {
    const BASE = '/oauth/authorizations';
    const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const keep = (jar: Map<string, string>, res: LightMyRequestResponse) => {
      for (const c of res.cookies as { name: string; value: string }[]) jar.set(c.name, c.value);
    };
    const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)![1];

    async function signedIn(user: TestUser) {
      const params: Record<string, string> = {
        response_type: 'code', client_id: app.identifier, redirect_uri: REDIRECT, scope: 'read', state: 'st',
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256',
      };
      const jar = new Map<string, string>();
      const url = `${BASE}/new?${new URLSearchParams(params)}`;
      const login = await s.ctx.inject({ method: 'GET', url });
      keep(jar, login);
      const form = new URLSearchParams({ ...params, email: user.email, password: user.password, csrf_token: csrfOf(login.body) });
      const posted = await s.ctx.inject({
        method: 'POST', url: `${BASE}/login`, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) }, payload: form.toString(),
      });
      expect(posted.statusCode).toBe(303);
      keep(jar, posted);
      expect(jar.has('hd_oauth_session')).toBe(true);
      const page = () => s.ctx.inject({ method: 'GET', url, headers: { cookie: cookieHeader(jar) } });
      const consent = await page();
      expect(consent.body).toContain('value="allow"');
      const allow = () =>
        s.ctx.inject({
          method: 'POST', url: BASE, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
          payload: new URLSearchParams({ ...params, decision: 'allow', csrf_token: csrfOf(consent.body) }).toString(),
        });
      return { page, allow };
    }

    it("after an admin sets the user's password, the old session shows the login page and gets no code", async () => {
      const user = await newAdmin();
      const session = await signedIn(user);
      expect((await setPassword(user, s.admin.basic, { password: 'reset-by-admin-2' })).statusCode).toBe(200);
      const page = await session.page();
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<h1>Sign in</h1>');
      expect(page.body).not.toContain('value="allow"');
      const allow = await session.allow();
      expect(allow.statusCode).toBe(200);
      expect(allow.body).toContain('Your session expired. Please sign in again.');
      expect(allow.headers.location).toBeUndefined();
    });

    it('after the user changes their own password, the old session ends too; a new sign-in works', async () => {
      const user = await newAdmin();
      const session = await signedIn(user);
      expect((await setPassword(user, user.basic, { password: 'own-new-password', previous_password: user.password })).statusCode).toBe(200);
      expect((await session.page()).body).toContain('<h1>Sign in</h1>');
      const again = await signedIn({ ...user, password: 'own-new-password', basic: basicHeader(user.email, 'own-new-password') });
      const allowed = await again.allow();
      expect(allowed.statusCode).toBe(303);
      expect(new URL(allowed.headers.location as string).searchParams.get('code')).toEqual(expect.any(String));
    });
  });
});
