import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { INSECURE, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';
import { describeWithChromium, launchChromium } from './helpers/browser';
import type { TestUser } from './helpers/test-app';

// /oauth/authorized_apps and /oauth/logout as a person meets them (docs/api.md, "Your
// authorized apps", "Signing out"): Debian's Chromium, a real server on 127.0.0.1,
// the application's side oauth4webapi. Sign in on the page, authorize an app in the
// same browser, see it listed, revoke it (its token refused at once), sign out (the
// saved session cookie replayed is refused), a password change ending a session, and
// forged posts refused. Screenshots: /tmp/shots/apps-*.png.

const SHOTS = '/tmp/shots';
const run = describeWithChromium;

run('the authorized apps page in a real browser', () => {
  let stack: OAuthStack;
  let browser: Browser;
  let callback: Server;
  let callbackUrl: string;
  let client: RegisteredClient;
  let seq = 0;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    stack = await startOAuthStack();
    callback = createServer((_req, res) => {
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

  const apps = () => `${stack.base}/oauth/authorized_apps`;
  const newAgent = () => stack.ctx.createUser(stack.admin.accountId, 'agent', { email: `apps-${++seq}@example.com`, password: `apps-password-${seq}` });
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `apps-${name}.png`), fullPage: true });

  async function signIn(page: Page, user: TestUser) {
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', user.password);
    await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')]);
  }

  /** The app asks for access in this browser (already signed in): consent, Allow, and oauth4webapi exchanges the code. */
  async function authorizeApp(page: Page): Promise<string> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL('/oauth/authorizations/new', stack.base);
    url.search = new URLSearchParams({
      response_type: 'code', client_id: client.identifier, redirect_uri: callbackUrl, scope: 'read write', state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).toString();
    await page.goto(url.toString());
    // the session of the apps page is the one of the authorization pages: no second sign-in
    await page.waitForSelector('button[value=allow]');
    await page.click('button[value=allow]');
    await page.waitForURL((u) => u.toString().startsWith(callbackUrl));
    const params = oauth.validateAuthResponse(stack.as, client.client, new URL(page.url()), state);
    const response = await oauth.authorizationCodeGrantRequest(stack.as, client.client, oauth.None(), params, callbackUrl, verifier, INSECURE);
    return (await oauth.processAuthorizationCodeResponse(stack.as, client.client, response)).access_token;
  }

  /** What the server answers a request that carries these cookies (a copy kept from before), seen with fetch. */
  async function withCookies(context: BrowserContext | Awaited<ReturnType<BrowserContext['cookies']>>, url: string) {
    const cookies = Array.isArray(context) ? context : await context.cookies(url);
    const res = await fetch(url, { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') }, redirect: 'manual' });
    return { status: res.status, body: await res.text() };
  }

  it('sign in on the page, authorize an app, see it, revoke it (its token refused at once), sign out (the old cookie refused)', async () => {
    const user = await newAgent();
    const context = await browser.newContext();
    const page = await context.newPage();

    const first = await page.goto(apps());
    expect(first?.status()).toBe(200);
    expect(first?.headers()).toMatchObject({ 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
    expect(first?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(await page.textContent('h1')).toBe('Sign in');
    expect(await page.textContent('main')).toContain('to see and revoke the apps you allowed');
    await shot(page, '1-sign-in');
    await signIn(page, user);
    expect(await page.textContent('h1')).toBe('Authorized apps');
    expect(await page.textContent('main')).toContain('No app can access your account.');
    const session = (await context.cookies(apps())).find((c) => c.name === 'hd_oauth_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/oauth' });

    const token = await authorizeApp(page);
    expect((await stack.current(token)).status).toBe(200);
    await page.goto(apps());
    const entry = (await page.textContent('ul.apps'))!;
    expect(entry).toContain('OAuth app');
    expect(entry).toContain('by Acme');
    expect(entry).toContain('Read your help desk data');
    expect(entry).toContain('Create, change and delete your help desk data');
    expect(entry).toMatch(/Allowed \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC · last used \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC/);
    await shot(page, '2-list');

    await Promise.all([page.waitForLoadState(), page.click('ul.apps button:has-text("Revoke")')]);
    expect(page.url()).toBe(`${apps()}?notice=revoked`);
    expect(await page.textContent('.notice')).toBe('The app’s access was revoked.');
    expect(await page.$('ul.apps')).toBeNull();
    expect(await page.textContent('main')).not.toContain('OAuth app');
    // at once: the app's token is refused on its next call
    expect((await stack.current(token)).status).toBe(401);
    await shot(page, '3-after-revoke');

    const saved = await context.cookies(apps());
    await Promise.all([page.waitForLoadState(), page.click('.signout button')]);
    expect(page.url()).toBe(`${apps()}?notice=signed_out`);
    expect(await page.textContent('h1')).toBe('Sign in');
    expect(await page.textContent('.notice')).toBe('You are signed out.');
    await shot(page, '4-signed-out');
    expect((await context.cookies(apps())).some((c) => c.name === 'hd_oauth_session')).toBe(false);
    // the session cookie saved before signing out, sent again: the session has ended server-side
    const replay = await withCookies(saved, apps());
    expect(replay.status).toBe(200);
    expect(replay.body).toContain('<h1>Sign in</h1>');
    expect(replay.body).not.toContain('Authorized apps');

    // /oauth/logout itself: signed out already
    await page.goto(`${stack.base}/oauth/logout`);
    expect(await page.textContent('h1')).toBe('You are signed out');
    await shot(page, '5-logout-page');
    await context.close();
  });

  it('/oauth/logout shows a Sign out button that ends the session', async () => {
    const user = await newAgent();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(apps());
    await signIn(page, user);
    await page.goto(`${stack.base}/oauth/logout`);
    expect(await page.textContent('h1')).toBe('Sign out');
    expect(await page.textContent('main')).toContain(user.email);
    await shot(page, '6-sign-out-button');
    await Promise.all([page.waitForLoadState(), page.click('button:has-text("Sign out")')]);
    expect(await page.textContent('h1')).toBe('You are signed out');
    await shot(page, '7-you-are-signed-out');
    await page.goto(apps());
    expect(await page.textContent('h1')).toBe('Sign in');
    await context.close();
  });

  it('a password change (PUT the password through the API) ends a live session on the next page load', async () => {
    const user = await newAgent();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(apps());
    await signIn(page, user);
    expect(await page.textContent('h1')).toBe('Authorized apps');
    const changed = await fetch(`${stack.base}/api/v2/users/${user.id}/password`, {
      method: 'PUT', headers: { authorization: user.basic, 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'changed-password-123', previous_password: user.password }),
    });
    expect(changed.status).toBe(200);
    await page.reload();
    expect(await page.textContent('h1')).toBe('Sign in');
    await context.close();
  });

  it('forged posts change nothing: a form of another site, and a post without or with a wrong CSRF token (403 page)', async () => {
    const user = await newAgent();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(apps());
    await signIn(page, user);
    const token = await authorizeApp(page);
    await page.goto(apps());
    const id = await page.inputValue('ul.apps input[name=id]');

    // another site's page posts the Revoke form (no token; SameSite=Lax keeps the session cookie home too)
    const attacker = await context.newPage();
    await attacker.goto(callbackUrl);
    await attacker.setContent(`<form method="post" action="${apps()}/revoke"><input name="id" value="${id}"><button>Win a prize</button></form>`);
    const [forged] = await Promise.all([attacker.waitForNavigation(), attacker.click('button')]);
    expect(forged?.status()).toBe(403);
    expect(await attacker.textContent('h1')).toBe('This request cannot be completed');
    await shot(attacker, '8-forged-post');

    // the same origin's cookies, the token missing or wrong
    for (const csrf of ['', 'f'.repeat(64)]) {
      const res = await page.request.post(`${apps()}/revoke`, { form: { id, ...(csrf ? { csrf_token: csrf } : {}) }, maxRedirects: 0 });
      expect(res.status()).toBe(403);
      const out = await page.request.post(`${stack.base}/oauth/logout`, { form: csrf ? { csrf_token: csrf } : {}, maxRedirects: 0 });
      expect(out.status()).toBe(403);
    }
    expect((await stack.current(token)).status).toBe(200);
    await page.goto(apps());
    expect(await page.textContent('h1')).toBe('Authorized apps');
    expect(await page.textContent('ul.apps')).toContain('OAuth app');
    await context.close();
  });
});
