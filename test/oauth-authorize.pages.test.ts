import { createTestApp, DOUBLE_REPLY, type TestContext, type TestUser } from './helpers/test-app';
import { REDIRECT, RFC7636 } from './helpers/oauth-server';
import { pagesBrowser, pagesFixture, signInToConsent } from './helpers/authorize-pages';

// Every answer of the authorization pages is sent once. Before, the consent page
// was followed by a second send of the login page (showConsent awaited the
// thenable reply, so its result was undefined): every consent logged
// FST_ERR_REP_ALREADY_SENT with the full query (client_id, redirect_uri, state,
// code_challenge). This walks the whole flow and fails on any such log line.

describe('the authorization pages answer each request once', () => {
  let ctx: TestContext;
  let agent: TestUser;
  let clientId: string;

  beforeAll(async () => {
    ctx = await createTestApp();
    ({ agent, clientId } = await pagesFixture(ctx, REDIRECT));
  });
  afterAll(() => ctx.close());

  const url = (extra: Record<string, string> = {}) =>
    `/oauth/authorizations/new?${new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 'st-9', code_challenge: RFC7636.challenge, code_challenge_method: 'S256', ...extra,
    })}`;
  const doubleReplies = () => ctx.logs.filter((line) => DOUBLE_REPLY.test(line));

  it('login page, wrong password, login, consent, Allow, Deny and the error answers: one reply each', async () => {
    const browser = pagesBrowser(ctx);
    const login = await browser.get(url());
    expect(login.statusCode).toBe(200);
    expect(login.body).toContain('Sign in');
    const wrong = await browser.post('/oauth/authorizations/login', { ...browser.hiddenFields(login.body), email: agent.email, password: 'not it' });
    expect(wrong.statusCode).toBe(401);

    const consent = await signInToConsent(browser, url(), agent);
    expect(consent.statusCode).toBe(200);
    expect(consent.body).toContain('Authorize <span class="app">Pages app</span>');
    expect(consent.body).not.toContain('Sign in');
    const fields = browser.hiddenFields(consent.body);
    const allow = await browser.post('/oauth/authorizations', { ...fields, decision: 'allow' });
    expect(allow.statusCode).toBe(303);
    expect(new URL(allow.headers.location as string).searchParams.get('code')).toMatch(/^[\w-]{43}$/);
    const deny = await browser.post('/oauth/authorizations', { ...fields, decision: 'deny' });
    expect(new URL(deny.headers.location as string).searchParams.get('error')).toBe('access_denied');

    // errors: an error page, a redirect with an error, a form without its CSRF token
    expect((await browser.get(url({ client_id: 'nobody' }))).statusCode).toBe(400);
    expect((await browser.get(url({ response_type: 'x' }))).statusCode).toBe(302);
    const forged = await pagesBrowser(ctx).post('/oauth/authorizations', { ...fields, decision: 'allow', csrf_token: 'f'.repeat(64) });
    expect(forged.statusCode).toBe(200);
    expect(forged.headers.location).toBeUndefined();

    expect(doubleReplies()).toEqual([]);
  });
});

describe('the suite-wide guard (test/helpers/test-app.ts)', () => {
  it('close() fails when the app logged a double reply', async () => {
    const ctx = await createTestApp();
    ctx.app.fastify.log.warn({ err: { code: 'FST_ERR_REP_ALREADY_SENT' } }, 'Reply was already sent, did you forget to "return reply" in "/x" (GET)?');
    await expect(ctx.close()).rejects.toThrow('The app answered a request twice');
  });
});
