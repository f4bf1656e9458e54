import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';
import { describeWithChromium, launchChromium, SHOTS } from './helpers/browser';

// docs/api.md, "CORS", as a browser dashboard meets it: Debian's Chromium opens a page
// served by another local server (another origin: http://127.0.0.1:<its port>, the API being
// http://localhost:<port>), whose script fetches /graphql and a REST route with a Bearer
// token. From the origin CORS_ORIGINS lists, both succeed and the page reads the bodies and
// an exposed header; from an origin it does not list, the same fetches fail (TypeError) and
// the page reads nothing. Screenshots: test-output/screenshots/10-cors-*.png.

const run = describeWithChromium;

/** The dashboard: runs both fetches on load and shows what it could read. */
function dashboardPage(api: string, token: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Dashboard</title>
<style>body{font:16px system-ui,sans-serif;margin:2em}td,th{border:1px solid #999;padding:.4em .8em;text-align:left}table{border-collapse:collapse}
.ok{background:#dfd}.failed{background:#fdd}</style></head><body>
<h1>Dashboard at <span id="origin"></span></h1><p>API: ${api}</p>
<table><thead><tr><th>call</th><th>result</th><th>what the page read</th></tr></thead><tbody id="rows"></tbody></table>
<script>
document.getElementById('origin').textContent = location.origin;
const api = ${JSON.stringify(api)};
const auth = { authorization: 'Bearer ' + ${JSON.stringify(token)} };
async function call(name, url, init, read) {
  let result;
  try {
    const res = await fetch(url, init);
    const body = await res.json();
    result = { ok: true, status: res.status, read: read(body), requestId: res.headers.get('x-request-id') };
  } catch (e) {
    result = { ok: false, error: e.name + ': ' + e.message };
  }
  const row = document.createElement('tr');
  row.className = result.ok ? 'ok' : 'failed';
  for (const text of [name, result.ok ? 'HTTP ' + result.status : result.error, result.ok ? result.read + ' (X-Request-Id ' + result.requestId + ')' : '—']) {
    const cell = document.createElement('td');
    cell.textContent = text;
    row.append(cell);
  }
  document.getElementById('rows').append(row);
  return result;
}
window.results = (async () => ({
  graphql: await call('POST /graphql', api + '/graphql', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { email } }' }) }, (b) => b.data.me.email),
  rest: await call('GET /api/v2/users/me.json', api + '/api/v2/users/me.json', { headers: auth }, (b) => b.user.email),
}))();
</script></body></html>`;
}

run('CORS from a page on another origin, in a real browser', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let browser: Browser;
  const pages: http.Server[] = [];
  const origins: string[] = [];
  let api = '';
  let token = '';

  beforeAll(async () => {
    // two page servers, two origins: the first is listed, the second is not
    for (let i = 0; i < 2; i++) {
      const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(dashboardPage(api, token)));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      pages.push(server);
      origins.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }
    ctx = await createTestApp({ corsOrigins: [origins[0]] });
    admin = await ctx.createUser(await ctx.createAccount(), 'admin', { email: 'dashboard.admin@example.com' });
    ({ token } = await insertToken(ctx, admin, { scopes: ['read'] }));
    const listening = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    api = `http://localhost:${new URL(listening).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(pages.map((s) => new Promise((r) => s.close(r))));
    await ctx?.close();
  });

  type Result = { ok: boolean; status?: number; read?: string; requestId?: string | null; error?: string };
  async function openDashboard(origin: string, shot: string): Promise<{ graphql: Result; rest: Result }> {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 420 } })).newPage();
    try {
      await page.goto(`${origin}/`);
      const results = await page.evaluate(() => (globalThis as unknown as { results: Promise<{ graphql: Result; rest: Result }> }).results);
      await page.screenshot({ path: path.join(SHOTS, shot) });
      return results;
    } finally {
      await page.context().close();
    }
  }

  /** the requests the server answered (its request log): method, path and status */
  const answered = () =>
    ctx.logs.map((line) => JSON.parse(line) as { msg?: string; method?: string; url?: string; status?: number })
      .filter((l) => l.msg === 'request')
      .map((l) => `${l.method} ${l.url} ${l.status}`);

  it('from the listed origin: both fetches succeed after their preflights, and the page reads the bodies and an exposed header', async () => {
    const { graphql, rest } = await openDashboard(origins[0], '10-cors-listed-origin.png');
    expect(graphql).toEqual({ ok: true, status: 200, read: admin.email, requestId: expect.stringMatching(/^[\w-]{8,}$/) });
    expect(rest).toEqual({ ok: true, status: 200, read: admin.email, requestId: expect.stringMatching(/^[\w-]{8,}$/) });
    // the Authorization header made the browser ask first, and the server allowed it
    expect(answered()).toEqual(['OPTIONS /graphql 204', 'POST /graphql 200', 'OPTIONS /api/v2/users/me.json 204', 'GET /api/v2/users/me.json 200']);
  });

  it('from an unlisted origin: both fetches fail with a TypeError, and the page reads nothing', async () => {
    const before = answered().length;
    const { graphql, rest } = await openDashboard(origins[1], '10-cors-unlisted-origin.png');
    expect(graphql).toEqual({ ok: false, error: expect.stringMatching(/^TypeError: Failed to fetch/) });
    expect(rest).toEqual({ ok: false, error: expect.stringMatching(/^TypeError: Failed to fetch/) });
    // the browser stopped at the preflight, which got no allow header: the requests themselves never came
    expect(answered().slice(before)).toEqual(['OPTIONS /graphql 400', 'OPTIONS /api/v2/users/me.json 404']);
  });
});
