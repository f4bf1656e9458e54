import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createTestApp, type TestContext } from './helpers/test-app';
import { describeWithChromium, launchChromium, SHOTS } from './helpers/browser';

// The API reference as a person meets it: Debian's Chromium, driven by playwright-core,
// opens Swagger UI at /api/docs (served from the package, offline: every request the
// page makes goes to this server), which loads /api/v2/openapi.json and lists the
// operations. Screenshots go to test-output/screenshots/ (7-api-docs*.png).

const run = describeWithChromium;

run('Swagger UI at /api/docs in a real browser', () => {
  let ctx: TestContext;
  let base: string;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    ctx = await createTestApp();
    base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
    page.on('request', (r) => requests.push(r.url()));
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

  const summaryPath = (apiPath: string) => page.locator(`.opblock-summary-path[data-path="${apiPath}"]`);
  const operation = (method: string, apiPath: string) => page.locator(`.opblock-${method}`, { has: summaryPath(apiPath) });

  it('lists the operations of /api/v2/openapi.json, grouped by tag', async () => {
    const res = await page.goto(`${base}/api/docs`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    expect(await page.textContent('.info .title')).toContain('Help desk API');
    for (const [method, apiPath] of [
      ['get', '/api/v2/oauth/tokens'],
      ['post', '/api/v2/oauth/tokens'],
      ['get', '/api/v2/oauth/clients/{id}'],
      ['post', '/api/v2/channels/voice/callback_requests'],
      ['post', '/oauth/tokens'],
      ['get', '/.well-known/oauth-authorization-server'],
    ]) {
      expect([method, apiPath, await operation(method, apiPath).count()]).toEqual([method, apiPath, 1]);
    }
    const tags = await page.locator('.opblock-tag').allTextContents();
    expect(tags.join(' ')).toMatch(/OAuth clients[\s\S]*OAuth tokens[\s\S]*Voice callback requests[\s\S]*OAuth 2\.0 authorization server/);
    expect(requests).toContain(`${base}/api/v2/openapi.json`);
    await page.screenshot({ path: path.join(SHOTS, '7-api-docs.png') });
  });

  it('expands an operation: its parameters and answers, the error envelope included', async () => {
    const block = operation('get', '/api/v2/oauth/tokens');
    await block.locator('.opblock-summary').first().click();
    await block.locator('.parameters').waitFor({ timeout: 10_000 });
    const parameters = await block.locator('.parameters .parameter__name').allTextContents();
    expect(parameters.map((p) => p.replace(/\s*\*?$/, '').trim())).toEqual(expect.arrayContaining(['all', 'client_id', 'page[size]', 'page[after]', 'per_page']));
    const statuses = (await block.locator('.responses-table .response-col_status').allTextContents()).map((s) => s.trim());
    expect(statuses).toEqual(expect.arrayContaining(['200', '400', '401', '403', '429']));
    await block.screenshot({ path: path.join(SHOTS, '7-api-docs-expanded.png') });
  });

  it('needed nothing but this server: no CDN, no failed request, no script error', () => {
    expect(requests.filter((u) => !u.startsWith(base) && !u.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
