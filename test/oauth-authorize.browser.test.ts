import { createServer, type Server } from 'node:http';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { INSECURE, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';
import { describeWithChromium, launchChromium, SHOTS } from './helpers/browser';

// The authorization endpoint as a person meets it: Debian's Chromium, driven by
// playwright-core, clicks through the login page, the consent page, Deny, and the
// error page; the application's side is oauth4webapi (PKCE, the code exchange),
// and its callback a small server on 127.0.0.1. Screenshots of every page go to
// test-output/screenshots/. Forms, cookies and CSRF without a browser (so on every
// machine): test/oauth-authorize.forms.test.ts.

const run = describeWithChromium;

run('authorization pages in a real browser', () => {
  let stack: OAuthStack;
  let browser: Browser;
  let callback: Server;
  let callbackUrl: string;
  let client: RegisteredClient;

  beforeAll(async () => {
    stack = await startOAuthStack();
    // the application's redirect target: a page that says it got the answer
    callback = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>App</title><h1>Back in the app</h1>');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as { port: number }).port}/cb`;
    client = await stack.register({ type: 'public', redirectUris: [callbackUrl] });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => callback?.close(resolve));
    await stack?.close();
  });

  async function authorizeUrl(opts: { state?: string; clientId?: string; redirectUri?: string } = {}) {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL('/oauth/authorizations/new', stack.base);
    url.search = new URLSearchParams({
      response_type: 'code', client_id: opts.clientId ?? client.identifier, redirect_uri: opts.redirectUri ?? callbackUrl,
      scope: 'read write', state: opts.state ?? oauth.generateRandomState(),
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).toString();
    return { url: url.toString(), verifier };
  }

  async function freshPage(): Promise<Page> {
    const context = await browser.newContext();
    return context.newPage();
  }

  async function signIn(page: Page, email: string, password: string) {
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', password);
    await page.click('button[type=submit]');
  }

  it('login, consent, Allow: the app gets a code it exchanges for a token that works', async () => {
    const state = oauth.generateRandomState();
    const { url, verifier } = await authorizeUrl({ state });
    const page = await freshPage();
    const first = await page.goto(url);
    expect(first?.status()).toBe(200);
    expect(first?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(await page.textContent('h1')).toBe('Sign in');
    expect(await page.textContent('main')).toContain('OAuth app');
    await page.screenshot({ path: path.join(SHOTS, '1-login.png') });

    await signIn(page, stack.agent.email, stack.agent.password);
    await page.waitForSelector('button[value=allow]');
    expect(await page.textContent('h1')).toContain('Authorize OAuth app');
    const consent = (await page.textContent('main'))!;
    expect(consent).toContain(stack.agent.email);
    expect(consent).toContain('Read your help desk data');
    expect(consent).toContain('Create, change and delete your help desk data');
    await page.screenshot({ path: path.join(SHOTS, '2-consent.png') });
    // the session cookie is HttpOnly and SameSite=Lax
    const cookies = await page.context().cookies(`${stack.base}/oauth/authorizations/new`);
    const session = cookies.find((c) => c.name === 'hd_oauth_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

    await page.click('button[value=allow]');
    await page.waitForURL((u) => u.toString().startsWith(callbackUrl));
    await page.screenshot({ path: path.join(SHOTS, '3-back-in-the-app.png') });
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('iss')).toBe(stack.as.issuer);
    const params = oauth.validateAuthResponse(stack.as, client.client, back, state);
    const response = await oauth.authorizationCodeGrantRequest(stack.as, client.client, oauth.None(), params, callbackUrl, verifier, INSECURE);
    const tokens = await oauth.processAuthorizationCodeResponse(stack.as, client.client, response);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const me = await stack.current(tokens.access_token);
    expect(me.status).toBe(200);
    expect(me.body.token).toMatchObject({ user_id: Number(stack.agent.id), scopes: ['read', 'write'] });
    await page.context().close();
  });

  it('Deny: the app gets access_denied and its state, and no code', async () => {
    const state = oauth.generateRandomState();
    const { url } = await authorizeUrl({ state });
    const page = await freshPage();
    await page.goto(url);
    // a person who allowed nothing yet (the agent's Allow above is remembered: no consent page for them)
    const person = await stack.ctx.createUser(stack.admin.accountId, 'agent');
    await signIn(page, person.email, person.password);
    await page.waitForSelector('button[value=deny]');
    await page.click('button[value=deny]');
    await page.waitForURL((u) => u.toString().startsWith(callbackUrl));
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('code')).toBeNull();
    await page.context().close();
  });

  it('a wrong password shows the login page again with an error, and no session', async () => {
    const { url } = await authorizeUrl();
    const page = await freshPage();
    await page.goto(url);
    await signIn(page, stack.agent.email, 'not the password');
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toBe('Wrong email or password.');
    expect(await page.inputValue('input[name=email]')).toBe(stack.agent.email);
    await page.screenshot({ path: path.join(SHOTS, '4-wrong-password.png') });
    expect((await page.context().cookies(`${stack.base}/oauth/authorizations/new`)).some((c) => c.name === 'hd_oauth_session')).toBe(false);
    await page.context().close();
  });

  it('an unknown client or an unregistered redirect_uri shows an error page and never redirects', async () => {
    const page = await freshPage();
    for (const [opts, shot] of [
      [{ clientId: 'no-such-client' }, '5-error-unknown-client.png'],
      [{ redirectUri: `${callbackUrl}/evil` }, '6-error-redirect-uri.png'],
      [{ redirectUri: callbackUrl.replace('127.0.0.1', 'localhost') }, ''],
    ] as const) {
      const { url } = await authorizeUrl(opts);
      const res = await page.goto(url);
      expect(res?.status()).toBe(400);
      expect(page.url().startsWith(stack.base)).toBe(true);
      expect(await page.textContent('h1')).toBe('This request cannot be authorized');
      if (shot) await page.screenshot({ path: path.join(SHOTS, shot) });
    }
    await page.context().close();
  });

  it('the pages cannot be framed by another site', async () => {
    const { url } = await authorizeUrl();
    const page = await freshPage();
    // the server did answer the framed request: what keeps the form out is the browser obeying frame-ancestors
    const answered = page.waitForResponse((r) => r.url() === url);
    await page.setContent(`<iframe id="f" src="${url}" width="400" height="400"></iframe><iframe id="control" src="${callbackUrl}"></iframe>`);
    expect((await answered).status()).toBe(200);
    // a page that allows framing does show in the same setting, so a missing form is not a frame that never loaded
    const control = await (await page.waitForSelector('#control')).contentFrame();
    await control!.waitForSelector('h1');
    expect(await control!.textContent('h1')).toBe('Back in the app');
    const frame = await (await page.waitForSelector('#f')).contentFrame();
    await frame!.waitForLoadState();
    expect(frame!.url()).not.toBe(url);
    expect(await frame!.$('input[name=password]')).toBeNull();
    await page.screenshot({ path: path.join(SHOTS, '8-framing-blocked.png') });
    await page.context().close();
  });
});
