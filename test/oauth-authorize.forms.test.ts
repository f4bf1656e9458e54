import { createHash, randomBytes } from 'node:crypto';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';
import { heading, hiddenFields, pageError, pagesBrowser, pagesFixture, setCookies, type PagesBrowser } from './helpers/authorize-pages';

// The authorization pages over HTTP, without a browser (runs everywhere; the browser
// test, test/oauth-authorize.browser.test.ts, shows what a person sees): the login
// form, the session and CSRF cookies with their flags, CSRF tokens missing, wrong or
// taken from another browser, a failed login, Allow → a code that the grant endpoint
// exchanges, Deny → access_denied, and a session used again for a second request.
// docs/api.md, "Sign-in sessions and CSRF". (That each answer is
// sent once: test/oauth-authorize.pages.test.ts.)

const NEW = '/oauth/authorizations/new';
const LOGIN = '/oauth/authorizations/login';
const DECIDE = '/oauth/authorizations';
const REDIRECT = 'https://app.example.com/cb';
const SESSION = 'hd_oauth_session';
const CSRF = 'hd_oauth_csrf';

const b64url = (b: Buffer) => b.toString('base64url');

describe('authorization pages over HTTP (no browser)', () => {
  let ctx: TestContext;
  let agent: TestUser;
  let clientId: string;
  let issuer: string;

  beforeAll(async () => {
    ctx = await createTestApp();
    ({ agent, clientId } = await pagesFixture(ctx, REDIRECT, { company: 'Acme' }));
    issuer = (await ctx.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json().issuer;
  });
  afterAll(() => ctx.close());
  // Each test starts from a user who allowed nothing yet: an earlier test's Allow would be
  // remembered, and the consent page skipped (remembered consent: test/oauth-remembered-consent.test.ts).
  beforeEach(() => ctx.db.sql('UPDATE oauth_grants SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [String(agent.id)]));

  /** A fresh authorization request (PKCE S256) and its verifier. */
  function request(state = b64url(randomBytes(8))) {
    const verifier = b64url(randomBytes(32));
    const query = {
      response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'read write', state,
      code_challenge: b64url(createHash('sha256').update(verifier).digest()), code_challenge_method: 'S256',
    };
    return { query, url: `${NEW}?${new URLSearchParams(query)}`, verifier, state };
  }

  /** Opens the login page and signs in; returns the consent page's answer. */
  async function signIn(browser: PagesBrowser, url: string, password = agent.password) {
    const login = await browser.get(url);
    expect(heading(login.body)).toBe('Sign in');
    const posted = await browser.post(LOGIN, { ...hiddenFields(login.body), email: agent.email, password });
    return { login, posted };
  }

  async function consentPage(browser: PagesBrowser, url: string) {
    const { posted } = await signIn(browser, url);
    expect(posted.statusCode).toBe(303);
    const consent = await browser.get(posted.headers.location as string);
    expect(consent.statusCode).toBe(200);
    expect(heading(consent.body)).toBe('Authorize Pages app by Acme');
    return consent;
  }

  const tokensStored = async () => ctx.db.prisma.oAuthToken.count({ where: { userId: agent.id } });
  const codesStored = async () => (await ctx.db.sql<{ n: number }>('SELECT count(*)::int AS n FROM oauth_authorization_codes'))[0].n;

  it('the login page sets only the CSRF cookie: HttpOnly, SameSite=Lax, Path=/oauth, not Secure over http', async () => {
    const browser = pagesBrowser(ctx);
    const res = await browser.get(request().url);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(setCookies(res)).toEqual([{ name: CSRF, value: expect.stringMatching(/^[\w-]{43}$/), httpOnly: true, sameSite: 'Lax', path: '/oauth' }]);
    expect(hiddenFields(res.body)).toMatchObject({ client_id: clientId, redirect_uri: REDIRECT, csrf_token: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('login, consent, Allow: a 303 to the app with code, state and iss; the code buys a token of the user', async () => {
    const { url, verifier, state } = request();
    const browser = pagesBrowser(ctx);
    const consent = await consentPage(browser, url);
    expect(consent.body).toContain(agent.email);
    const session = setCookies((await signIn(pagesBrowser(ctx), url)).posted).find((c) => c.name === SESSION);
    expect(session).toEqual({ name: SESSION, value: expect.any(String), httpOnly: true, sameSite: 'Lax', path: '/oauth', maxAge: 900 });

    const allow = await browser.post(DECIDE, { ...hiddenFields(consent.body), decision: 'allow' });
    expect(allow.statusCode).toBe(303);
    const back = new URL(allow.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('iss')).toBe(issuer);
    const code = back.searchParams.get('code')!;
    expect(code).toMatch(/^[\w-]{20,}$/);

    const grant = await ctx.inject({
      method: 'POST', url: '/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier }).toString(),
    });
    expect(grant.statusCode).toBe(200);
    const me = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', headers: { authorization: `Bearer ${grant.json().access_token}` } });
    expect(me.statusCode).toBe(200);
    expect(me.json().token).toMatchObject({ user_id: Number(agent.id), scopes: ['read', 'write'] });
  });

  it('Deny: a 303 to the app with error=access_denied and the state, no code, nothing stored', async () => {
    const { url, state } = request();
    const browser = pagesBrowser(ctx);
    const consent = await consentPage(browser, url);
    const [tokens, codes] = [await tokensStored(), await codesStored()];
    const deny = await browser.post(DECIDE, { ...hiddenFields(consent.body), decision: 'deny' });
    expect(deny.statusCode).toBe(303);
    const back = new URL(deny.headers.location as string);
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'access_denied', error_description: expect.any(String), state, iss: issuer });
    expect([await tokensStored(), await codesStored()]).toEqual([tokens, codes]);
  });

  it.each([
    ['a wrong password', (u: TestUser) => ({ email: u.email, password: 'not the password' })],
    ['an unknown email', () => ({ email: 'nobody@example.com', password: 'whatever-password' })],
    ['an empty password', (u: TestUser) => ({ email: u.email, password: '' })],
  ])('%s: 401, the login page again with the error and the email kept, no session', async (_what, credentials) => {
    const browser = pagesBrowser(ctx);
    const login = await browser.get(request().url);
    const { email, password } = credentials(agent);
    const res = await browser.post(LOGIN, { ...hiddenFields(login.body), email, password });
    expect(res.statusCode).toBe(401);
    expect(heading(res.body)).toBe('Sign in');
    expect(pageError(res.body)).toBe('Wrong email or password.');
    expect(res.body).toContain(`value="${email}"`);
    expect(res.headers.location).toBeUndefined();
    expect(browser.jar.has(SESSION)).toBe(false);
  });

  describe('CSRF: a login form is refused (403, no session) when its token is', () => {
    const refusedLogin = async (browser: PagesBrowser, fields: Record<string, string>) => {
      const res = await browser.post(LOGIN, { ...fields, email: agent.email, password: agent.password });
      expect(res.statusCode).toBe(403);
      expect(pageError(res.body)).toBe('Your session expired. Please sign in again.');
      expect(setCookies(res).map((c) => c.name)).not.toContain(SESSION);
      expect(browser.jar.has(SESSION)).toBe(false);
    };

    it('missing (a cross-site form post: no cookie, no token)', async () => {
      await refusedLogin(pagesBrowser(ctx), request().query);
    });

    it('missing while the CSRF cookie is there', async () => {
      const browser = pagesBrowser(ctx);
      const { csrf_token: _dropped, ...fields } = hiddenFields((await browser.get(request().url)).body);
      await refusedLogin(browser, fields);
    });

    it('wrong', async () => {
      const browser = pagesBrowser(ctx);
      const fields = hiddenFields((await browser.get(request().url)).body);
      await refusedLogin(browser, { ...fields, csrf_token: 'f'.repeat(64) });
    });

    it("another browser's (a token replayed with the attacker's own cookie)", async () => {
      const victim = pagesBrowser(ctx);
      const stolen = hiddenFields((await victim.get(request().url)).body).csrf_token;
      const attacker = pagesBrowser(ctx);
      const fields = hiddenFields((await attacker.get(request().url)).body);
      expect(fields.csrf_token).not.toBe(stolen);
      await refusedLogin(attacker, { ...fields, csrf_token: stolen });
    });
  });

  describe('CSRF: an Allow is refused (the login page again, no redirect, no code) when', () => {
    const refusedAllow = async (browser: PagesBrowser, fields: Record<string, string>) => {
      const codes = await codesStored();
      const res = await browser.post(DECIDE, { ...fields, decision: 'allow' });
      expect(res.statusCode).toBe(200);
      expect(res.headers.location).toBeUndefined();
      expect(heading(res.body)).toBe('Sign in');
      expect(await codesStored()).toBe(codes);
    };

    it('the token is missing', async () => {
      const browser = pagesBrowser(ctx);
      const { csrf_token: _dropped, ...fields } = hiddenFields((await consentPage(browser, request().url)).body);
      await refusedAllow(browser, fields);
    });

    it('the token is wrong', async () => {
      const browser = pagesBrowser(ctx);
      const fields = hiddenFields((await consentPage(browser, request().url)).body);
      await refusedAllow(browser, { ...fields, csrf_token: '0'.repeat(64) });
    });

    it("the token is another browser's, replayed with a session of its own", async () => {
      const victim = pagesBrowser(ctx);
      const stolen = hiddenFields((await consentPage(victim, request().url)).body).csrf_token;
      const attacker = pagesBrowser(ctx);
      const fields = hiddenFields((await consentPage(attacker, request().url)).body);
      await refusedAllow(attacker, { ...fields, csrf_token: stolen });
    });

    it('there is no session (the CSRF cookie and its token alone)', async () => {
      const browser = pagesBrowser(ctx);
      const fields = hiddenFields((await browser.get(request().url)).body);
      await refusedAllow(browser, fields);
    });

    it('the session cookie was tampered with', async () => {
      const browser = pagesBrowser(ctx);
      const fields = hiddenFields((await consentPage(browser, request().url)).body);
      const [value, signature] = browser.jar.get(SESSION)!.split(/\.(?=[^.]*$)/);
      browser.jar.set(SESSION, `${value.replace(/^\d+/, (id) => String(Number(id) + 1))}.${signature}`);
      await refusedAllow(browser, fields);
    });
  });

  it('a session is used again: a second request in the same browser goes straight to consent, and Allow gives a second code', async () => {
    const browser = pagesBrowser(ctx);
    await consentPage(browser, request().url);
    const second = request();
    const page = await browser.get(second.url);
    expect(page.statusCode).toBe(200);
    expect(heading(page.body)).toBe('Authorize Pages app by Acme');
    expect(hiddenFields(page.body).state).toBe(second.state);
    const allow = await browser.post(DECIDE, { ...hiddenFields(page.body), decision: 'allow' });
    expect(allow.statusCode).toBe(303);
    const back = new URL(allow.headers.location as string);
    expect(back.searchParams.get('state')).toBe(second.state);
    expect(back.searchParams.get('code')).toMatch(/^[\w-]{20,}$/);
    // another browser (no cookies) is asked to sign in
    expect(heading((await pagesBrowser(ctx).get(second.url)).body)).toBe('Sign in');
  });
});

describe('authorization pages behind an https PUBLIC_URL', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestApp({ publicUrl: 'https://helpdesk.example.com' });
  });
  afterAll(() => ctx.close());

  it('the cookies are Secure', async () => {
    const account = await ctx.createAccount();
    const admin = await ctx.createUser(account, 'admin');
    const agent = await ctx.createUser(account, 'agent');
    const created = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: admin.basic },
      payload: { name: 'Secure app', client_type: 'confidential', scopes: 'read', redirect_uris: [REDIRECT] },
    });
    expect(created.statusCode).toBe(201);
    const browser = pagesBrowser(ctx);
    const query = { response_type: 'code', client_id: created.json().client_identifier, redirect_uri: REDIRECT, state: 's' };
    const login = await browser.get(`${NEW}?${new URLSearchParams(query)}`);
    expect(setCookies(login)).toEqual([expect.objectContaining({ name: CSRF, secure: true, httpOnly: true, sameSite: 'Lax' })]);
    const posted = await browser.post(LOGIN, { ...hiddenFields(login.body), email: agent.email, password: agent.password });
    expect(posted.statusCode).toBe(303);
    expect(setCookies(posted)).toEqual([expect.objectContaining({ name: SESSION, secure: true, httpOnly: true, sameSite: 'Lax' })]);
  });
});
