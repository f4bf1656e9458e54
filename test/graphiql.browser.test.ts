import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';
import { describeWithChromium, launchChromium, SHOTS } from './helpers/browser';

// The offline GraphQL explorer as a person meets it: Debian's Chromium, driven by
// playwright-core, opens GraphiQL at /graphiql (served from the installed packages:
// every request the page makes goes to this server, under the page's strict
// Content-Security-Policy), enters an admin's token in the Headers pane, runs the
// default document and reads the docs. Screenshots go to test-output/screenshots/
// (8-graphiql*.png).

const run = describeWithChromium;

run('GraphiQL at /graphiql in a real browser', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let base: string;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  /** the Authorization header of every request to /graphql ('' when none) */
  const graphqlAuthorizations: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin', { email: 'grace.admin@example.com' });
    base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    page.on('request', (r) => {
      requests.push(r.url());
      if (r.url() === `${base}/graphql`) graphqlAuthorizations.push(r.headers().authorization ?? '');
    });
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()}`));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
  });
  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  const queryEditor = () => page.locator('.graphiql-query-editor .CodeMirror');
  const headersEditor = () => page.locator('.graphiql-editor-tool .CodeMirror').last();
  const resultPane = () => page.locator('.result-window');

  it('opens with the default document and the Authorization template in the Headers pane', async () => {
    const res = await page.goto(`${base}/graphiql`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('GraphiQL: Help desk GraphQL API (offline explorer)');
    await queryEditor().waitFor({ timeout: 30_000 });
    const query = await queryEditor().innerText();
    expect(query).toContain('query Me');
    expect(query).toContain('Every operation needs credentials');
    expect(await headersEditor().innerText()).toContain('"Authorization": "Bearer <token>"');
    // the schema loaded (introspection without the unfilled template header)
    await page.locator('.graphiql-query-editor .cm-property', { hasText: 'oauthTokens' }).first().waitFor({ timeout: 10_000 });
  });

  it('runs the default document with the admin token entered in the Headers pane: the result shows their email', async () => {
    const { token } = await insertToken(ctx, admin);
    await headersEditor().click();
    await page.keyboard.press('Control+A');
    // typed as a paste: CodeMirror would close the brackets and quotes of keystrokes itself
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${token}` }));
    await page.locator('.graphiql-execute-button').click();
    await resultPane().getByText(admin.email).waitFor({ timeout: 15_000 });
    const result = await resultPane().innerText();
    expect(result).toContain('"authenticatedVia": "bearer"');
    expect(result).toContain('"totalCount": 1');
    expect(result).not.toContain('UNAUTHENTICATED');
    expect(graphqlAuthorizations).toContain(`Bearer ${token}`);
    // the template was never sent as it stood (it would have failed the schema's introspection)
    expect(graphqlAuthorizations.filter((a) => a.includes('<token>'))).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, '8-graphiql-result.png') });
  });

  it("shows a field's description in the Documentation explorer", async () => {
    await page.locator('button[aria-label="Show Documentation Explorer"]').click();
    const docs = page.locator('.graphiql-doc-explorer');
    await docs.getByText('Query', { exact: true }).first().click();
    await docs.getByText('me', { exact: true }).first().click();
    await docs.getByText(/^The authenticated user \(or the impersonated end user\)\. Who: any user\./).first().waitFor({ timeout: 10_000 });
    expect(await page.locator('.graphiql-doc-explorer-title').innerText()).toBe('me');
    await page.screenshot({ path: path.join(SHOTS, '8-graphiql-docs.png') });
  });

  it("opens GraphiQL's settings dialog, whose inline style the page's policy allows", async () => {
    await page.locator('button[aria-label="Open settings dialog"]').click();
    await page.getByRole('dialog').getByText('Clear storage').waitFor({ timeout: 10_000 });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('runs a subscription over WebSocket with the Headers pane as credentials: an event shows after a change', async () => {
    const sockets: string[] = [];
    page.on('websocket', (ws) => sockets.push(ws.url()));
    await queryEditor().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('subscription Live { accountEvents { type subject } }');
    // GraphiQL takes the operation's name from the editor a moment after typing (before, it would send the previous one's, "Me")
    await page.waitForTimeout(500);
    await page.locator('.graphiql-execute-button').click();
    // the subscription is live once the server holds it (graphql-ws does not acknowledge a subscribe)
    const deadline = Date.now() + 15_000;
    while (ctx.app.eventFeed.subscriptionCount === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const created = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: admin.basic },
      payload: { name: 'Seen live', scopes: 'read', redirect_uris: 'https://live.example.com/cb' },
    });
    expect(created.statusCode).toBe(201);
    await resultPane().getByText('zen:event-type:oauth_client.created').waitFor({ timeout: 15_000 });
    expect(await resultPane().innerText()).toContain(`zen:oauth_client:${created.json().id}`);
    expect(sockets).toEqual([`${base.replace(/^http/, 'ws')}/graphql`]);
    await page.screenshot({ path: path.join(SHOTS, '8-graphiql-subscription.png') });
  });

  it('needed nothing but this server: no CDN, no failed request, no script error, no policy violation', () => {
    expect(requests.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:'))).toEqual([]);
    expect(requests).toContain(`${base}/graphiql/assets/graphiql@4.1.2/graphiql.min.js`);
    expect(problems).toEqual([]);
  });
});
