import * as oauth from 'oauth4webapi';
import { INSECURE, REDIRECT, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';
import { heading, hiddenFields, pageError, pagesBrowser } from './helpers/authorize-pages';
import type { TestUser } from './helpers/test-app';

// Sign-in sessions, /oauth/logout and remembered consent over real HTTP (fetch on
// 127.0.0.1, a cookie jar of its own), the application's side being oauth4webapi:
// docs/api.md, "Sign-in sessions", "Signing out", "Remembered consent". What a
// person sees in a browser: test/authorized-apps.browser.test.ts.

const SESSION = 'hd_oauth_session';

interface Answer {
  status: number;
  location: string | null;
  body: string;
}

/** A browser without a screen: a cookie jar, forms posted as a browser posts them, redirects not followed. */
function httpBrowser(base: string) {
  const jar = new Map<string, string>();
  const send = async (path: string, init: RequestInit = {}): Promise<Answer> => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(new URL(path, base), { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(/;\s*/);
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      // a cleared cookie (Max-Age=0 or an expiry in the past) leaves the jar
      if (value === '' || attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now()))) jar.delete(name);
      else jar.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  };
  return {
    jar,
    get: (path: string) => send(path),
    post: (path: string, fields: Record<string, string>) =>
      send(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }),
  };
}
type HttpBrowser = ReturnType<typeof httpBrowser>;

describe('sign-in sessions, sign-out and remembered consent over HTTP', () => {
  let stack: OAuthStack;
  let client: RegisteredClient;
  let seq = 0;

  beforeAll(async () => {
    stack = await startOAuthStack();
    client = await stack.register({ type: 'public' });
  });
  afterAll(() => stack?.close());

  const newAgent = () => stack.ctx.createUser(stack.admin.accountId, 'agent', { email: `sessions-${++seq}@example.com`, password: `sessions-password-${seq}` });

  /** An authorization request of the client (PKCE S256), as oauth4webapi's application builds it. */
  async function authorization(scope: string) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const query = new URLSearchParams({
      response_type: 'code', client_id: client.identifier, redirect_uri: REDIRECT, scope, state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    return { path: `/oauth/authorizations/new?${query}`, verifier, state };
  }

  /** The application's side of the redirect: the code checked (state, iss) and exchanged by oauth4webapi. */
  async function exchange(location: string, request: { verifier: string; state: string }) {
    const params = oauth.validateAuthResponse(stack.as, client.client, new URL(location), request.state);
    const response = await oauth.authorizationCodeGrantRequest(stack.as, client.client, oauth.None(), params, REDIRECT, request.verifier, INSECURE);
    return oauth.processAuthorizationCodeResponse(stack.as, client.client, response);
  }

  async function signIn(browser: HttpBrowser, path: string, user: TestUser, action = '/oauth/authorizations/login') {
    const login = await browser.get(path);
    expect(heading(login.body)).toBe('Sign in');
    const posted = await browser.post(action, { ...hiddenFields(login.body), email: user.email, password: user.password });
    expect(posted.status).toBe(303);
    expect(browser.jar.has(SESSION)).toBe(true);
    return posted.location!;
  }

  /** Sign-in (when needed), the consent page, Allow: the redirect back to the app. */
  async function consentAndAllow(browser: HttpBrowser, path: string, user: TestUser) {
    let page = await browser.get(path);
    if (heading(page.body) === 'Sign in') page = await browser.get(await signIn(browser, path, user));
    expect(page.status).toBe(200);
    expect(heading(page.body)).toBe('Authorize OAuth app by Acme');
    const allowed = await browser.post('/oauth/authorizations', { ...hiddenFields(page.body), decision: 'allow' });
    expect(allowed.status).toBe(303);
    return allowed.location!;
  }

  const grantsOf = async (user: TestUser) =>
    stack.ctx.db.sql<{ id: string; scopes: string[]; revoked: boolean }>('SELECT id, scopes, revoked_at IS NOT NULL AS revoked FROM oauth_grants WHERE user_id = $1 ORDER BY id', [String(user.id)]);

  describe('remembered consent (oauth4webapi)', () => {
    it('the first authorization shows consent; the same client and scopes again come straight back with a code that exchanges, on the same grant', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      const first = await authorization('read write');
      const tokens = await exchange(await consentAndAllow(browser, first.path, user), first);
      expect((await stack.current(tokens.access_token)).status).toBe(200);

      const second = await authorization('read write');
      const again = await browser.get(second.path);
      // no consent page: the redirect itself, with the code, the state and the issuer
      expect(again.status).toBe(302);
      expect(again.body).not.toContain('Authorize');
      const back = new URL(again.location!);
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect(back.searchParams.get('state')).toBe(second.state);
      expect(back.searchParams.get('iss')).toBe(stack.as.issuer);
      const secondTokens = await exchange(again.location!, second);
      const me = await stack.current(secondTokens.access_token);
      expect(me.status).toBe(200);
      expect(me.body.token).toMatchObject({ user_id: Number(user.id), scopes: ['read', 'write'] });
      // one grant: one entry in the person's list, revoked as one
      expect(await grantsOf(user)).toEqual([expect.objectContaining({ scopes: ['read', 'write'], revoked: false })]);
    });

    it('fewer scopes than allowed: remembered, and the token has only the scopes asked for', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      const first = await authorization('read write');
      await exchange(await consentAndAllow(browser, first.path, user), first);
      const narrow = await authorization('read');
      const again = await browser.get(narrow.path);
      expect(again.status).toBe(302);
      const tokens = await exchange(again.location!, narrow);
      expect(tokens.scope).toBe('read');
      expect((await stack.current(tokens.access_token)).body.token.scopes).toEqual(['read']);
    });

    it('more scopes than allowed: the consent page again, and the new grant has the scopes asked for', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      const first = await authorization('read');
      await exchange(await consentAndAllow(browser, first.path, user), first);
      const wider = await authorization('read write');
      const page = await browser.get(wider.path);
      expect(page.status).toBe(200);
      expect(heading(page.body)).toBe('Authorize OAuth app by Acme');
      const tokens = await exchange(await consentAndAllow(browser, wider.path, user), wider);
      expect(tokens.scope).toBe('read write');
      expect((await grantsOf(user)).map((g) => g.scopes)).toEqual([['read'], ['read', 'write']]);
    });

    it('after the person revokes the app, the consent page again; a grant whose token an admin revoked is not remembered either', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      const first = await authorization('read write');
      const tokens = await exchange(await consentAndAllow(browser, first.path, user), first);
      const [grant] = await grantsOf(user);
      await stack.ctx.app.services.authorizedApps.revoke(
        { accountId: user.accountId, userId: user.id, role: 'agent', email: user.email, name: 'Agent', via: 'basic', origin: { via: 'oauth' } },
        `grant-${grant.id}`,
      );
      expect((await stack.current(tokens.access_token)).status).toBe(401);
      const second = await authorization('read write');
      const page = await browser.get(second.path);
      expect(page.status).toBe(200);
      expect(heading(page.body)).toBe('Authorize OAuth app by Acme');

      // a new consent; then an admin revokes its token (DELETE /api/v2/oauth/tokens/{id}): asked again
      const secondTokens = await exchange(await consentAndAllow(browser, second.path, user), second);
      const id = (await stack.current(secondTokens.access_token)).body.token.id;
      const deleted = await stack.ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/tokens/${id}`, headers: { authorization: stack.admin.basic } });
      expect(deleted.statusCode).toBe(204);
      const third = await authorization('read write');
      expect(heading((await browser.get(third.path)).body)).toBe('Authorize OAuth app by Acme');
    });

    it('PKCE and redirect_uri are checked as ever: a remembered consent with a wrong verifier gets no token, an unregistered redirect_uri no code', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      const first = await authorization('read');
      await exchange(await consentAndAllow(browser, first.path, user), first);
      const second = await authorization('read');
      const again = await browser.get(second.path);
      expect(again.status).toBe(302);
      await expect(exchange(again.location!, { ...second, verifier: oauth.generateRandomCodeVerifier() })).rejects.toThrow();
      const evil = await browser.get(second.path.replace(encodeURIComponent(REDIRECT), encodeURIComponent('https://evil.example.com/cb')));
      expect(evil.status).toBe(400);
      expect(evil.location).toBeNull();
    });
  });

  describe('/oauth/logout', () => {
    it('GET shows a Sign out button; POST ends the session: the saved cookie replayed is refused server-side', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      const first = await authorization('read');
      await exchange(await consentAndAllow(browser, first.path, user), first);
      const saved = new Map(browser.jar);

      const confirm = await browser.get('/oauth/logout');
      expect(confirm.status).toBe(200);
      expect(heading(confirm.body)).toBe('Sign out');
      expect(confirm.body).toContain(user.email);
      const out = await browser.post('/oauth/logout', hiddenFields(confirm.body));
      expect(out.status).toBe(200);
      expect(heading(out.body)).toBe('You are signed out');
      expect(browser.jar.has(SESSION)).toBe(false);

      // the cookie kept from before: its session has ended, for every page
      const replay = httpBrowser(stack.base);
      for (const [k, v] of saved) replay.jar.set(k, v);
      const second = await authorization('read');
      expect(heading((await replay.get(second.path)).body)).toBe('Sign in');
      expect(heading((await replay.get('/oauth/authorized_apps')).body)).toBe('Sign in');
      expect(heading((await replay.get('/oauth/logout')).body)).toBe('You are signed out');
      const [row] = await stack.ctx.db.sql<{ ended: boolean }>('SELECT ended_at IS NOT NULL AS ended FROM oauth_sessions WHERE user_id = $1', [String(user.id)]);
      expect(row.ended).toBe(true);
    });

    it('POST without or with a wrong CSRF token: 403, the session goes on', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      await signIn(browser, '/oauth/authorized_apps', user, '/oauth/authorized_apps/login');
      for (const fields of [{}, { csrf_token: 'f'.repeat(64) }] as Record<string, string>[]) {
        const res = await browser.post('/oauth/logout', fields);
        expect(res.status).toBe(403);
        expect(browser.jar.has(SESSION)).toBe(true);
      }
      expect(heading((await browser.get('/oauth/authorized_apps')).body)).toBe('Authorized apps');
    });

    it('return_to: a same-origin path is followed; another origin never (no open redirect)', async () => {
      const user = await newAgent();
      for (const evil of ['https://evil.example.com/x', '//evil.example.com/x', '/\\evil.example.com', '\\\\evil.example.com', 'javascript:alert(1)', '/%0d%0aSet-Cookie:x=1', ' /oauth/authorized_apps']) {
        const browser = httpBrowser(stack.base);
        await signIn(browser, '/oauth/authorized_apps', user, '/oauth/authorized_apps/login');
        const get = await browser.get(`/oauth/logout?return_to=${encodeURIComponent(evil)}`);
        expect({ evil, status: get.status, location: get.location }).toEqual({ evil, status: evil.startsWith('/%0d') ? 200 : 400, location: null });
        const csrf = hiddenFields((await browser.get('/oauth/logout')).body).csrf_token;
        const out = await browser.post('/oauth/logout', { csrf_token: csrf, return_to: evil });
        // signed out all the same, but shown the page here, not sent elsewhere
        const sent = out.location === null ? null : new URL(out.location, stack.base).origin;
        expect({ evil, status: out.status, sent }).toEqual(evil.startsWith('/%0d') ? { evil, status: 303, sent: stack.base } : { evil, status: 200, sent: null });
        expect(browser.jar.has(SESSION)).toBe(false);
      }
      const browser = httpBrowser(stack.base);
      await signIn(browser, '/oauth/authorized_apps', user, '/oauth/authorized_apps/login');
      const confirm = await browser.get('/oauth/logout?return_to=%2Foauth%2Fauthorized_apps');
      expect(hiddenFields(confirm.body).return_to).toBe('/oauth/authorized_apps');
      const out = await browser.post('/oauth/logout', hiddenFields(confirm.body));
      expect(out).toMatchObject({ status: 303, location: '/oauth/authorized_apps' });
    });
  });

  describe('/oauth/authorized_apps over HTTP', () => {
    it('odd queries and forms get a page, never a 500: notice=__proto__, a repeated or huge field, a tampered cookie', async () => {
      const browser = httpBrowser(stack.base);
      for (const path of ['/oauth/authorized_apps?notice=__proto__', '/oauth/authorized_apps?notice=a&notice=b', '/oauth/logout?return_to=a&return_to=b', '/oauth/logout?return_to=%00']) {
        const { status } = await browser.get(path);
        expect({ path, page: status < 500 }).toEqual({ path, page: true });
      }
      browser.jar.set(SESSION, 's%3A99999999999999999999.x.y');
      expect((await browser.get('/oauth/authorized_apps')).status).toBe(200);
      browser.jar.set(SESSION, 'nonsense');
      expect(heading((await browser.get('/oauth/authorized_apps')).body)).toBe('Sign in');
      const login = await browser.get('/oauth/authorized_apps');
      const fields = hiddenFields(login.body);
      for (const extra of [{ email: 'x'.repeat(5000), password: 'y' }, { id: 'grant-99999999999999999999999' }] as Record<string, string>[]) {
        expect((await browser.post('/oauth/authorized_apps/login', { ...fields, ...extra })).status).toBeLessThan(500);
        expect((await browser.post('/oauth/authorized_apps/revoke', { ...fields, ...extra })).status).toBeLessThan(500);
      }
    });

    it("a password change ends the page's session on its next load", async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      await signIn(browser, '/oauth/authorized_apps', user, '/oauth/authorized_apps/login');
      expect(heading((await browser.get('/oauth/authorized_apps')).body)).toBe('Authorized apps');
      const changed = await stack.ctx.inject({
        method: 'PUT', url: `/api/v2/users/${user.id}/password`, headers: { authorization: user.basic, 'content-type': 'application/json' },
        payload: { password: 'a-brand-new-password-1', previous_password: user.password },
      });
      expect(changed.statusCode).toBe(200);
      expect(heading((await browser.get('/oauth/authorized_apps')).body)).toBe('Sign in');
    });

    it('revoke: CSRF-protected (403, nothing revoked); with the token the entry is gone and its token refused', async () => {
      const user = await newAgent();
      const browser = httpBrowser(stack.base);
      const first = await authorization('read write');
      const tokens = await exchange(await consentAndAllow(browser, first.path, user), first);
      const list = await browser.get('/oauth/authorized_apps');
      expect(list.body).toContain('OAuth app');
      const [grant] = await grantsOf(user);
      for (const csrf of [undefined, 'f'.repeat(64)]) {
        const res = await browser.post('/oauth/authorized_apps/revoke', { id: `grant-${grant.id}`, ...(csrf ? { csrf_token: csrf } : {}) });
        expect(res.status).toBe(403);
      }
      expect((await stack.current(tokens.access_token)).status).toBe(200);
      const revoke = await browser.post('/oauth/authorized_apps/revoke', hiddenFields(list.body));
      expect(revoke).toMatchObject({ status: 303, location: '/oauth/authorized_apps?notice=revoked' });
      expect((await stack.current(tokens.access_token)).status).toBe(401);
      const after = await browser.get(revoke.location!);
      expect(after.body).not.toContain('OAuth app');
      expect(after.body).toContain('The app’s access was revoked.');
      // another person's entry, or the same one again: not found, nothing changes
      const again = await browser.post('/oauth/authorized_apps/revoke', { ...hiddenFields(list.body) });
      expect(again.status).toBe(404);
    });

    it("on an account's host only that account's people sign in, and a session of another account does not count there", async () => {
      const other = await stack.ctx.createAccount();
      const stranger = await stack.ctx.createUser(other, 'agent', { email: `stranger-${++seq}@example.com`, password: 'stranger-password-1' });
      const [{ subdomain }] = await stack.ctx.db.sql<{ subdomain: string }>('SELECT subdomain FROM accounts WHERE id = $1', [String(stack.admin.accountId)]);
      const host = `${subdomain}.localhost`;
      const browser = pagesBrowser(stack.ctx, host);
      const login = await browser.get('/oauth/authorized_apps');
      const refused = await browser.post('/oauth/authorized_apps/login', { ...hiddenFields(login.body), email: stranger.email, password: stranger.password });
      expect(refused.statusCode).toBe(401);
      expect(pageError(refused.body)).toBe('Wrong email or password.');
      // signed in on the plain host as the stranger: that session is not one of this account's
      const plain = pagesBrowser(stack.ctx);
      const plainLogin = await plain.get('/oauth/authorized_apps');
      expect((await plain.post('/oauth/authorized_apps/login', { ...hiddenFields(plainLogin.body), email: stranger.email, password: stranger.password })).statusCode).toBe(303);
      expect(heading((await plain.get('/oauth/authorized_apps')).body)).toBe('Authorized apps');
      const onHost = pagesBrowser(stack.ctx, host);
      for (const [k, v] of plain.jar) onHost.jar.set(k, v);
      expect(heading((await onHost.get('/oauth/authorized_apps')).body)).toBe('Sign in');
      // an API token is not a password here ("email/token")
      const token = await newAgent();
      const tokenLogin = await browser.post('/oauth/authorized_apps/login', { ...hiddenFields(login.body), email: `${token.email}/token`, password: 'anything' });
      expect(tokenLogin.statusCode).toBe(401);
    });
  });
});
