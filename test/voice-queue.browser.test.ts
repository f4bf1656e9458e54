import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';
import { describeWithChromium, launchChromium, SHOTS } from './helpers/browser';

// The live queue page (docs/api.md, "The live queue page") as an admin meets it: Debian's
// Chromium, driven by playwright-core, opens /voice/queue on a listening server, is refused
// a wrong token, then shows the queue with the admin's token. Everything else happens
// through REST, outside the browser, and the page must show it without a reload: callbacks
// created, an agent coming online and being offered one, the agent accepting (dialing, on a
// call), the callback answered (gone from the table, the next one offered). Screenshots go
// to test-output/screenshots/ (9-voice-queue*.png).

const run = describeWithChromium;

run('the live queue page at /voice/queue in a real browser', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let ada: TestUser;
  let alan: TestUser;
  let token: string;
  let phoneId: number;
  let groupId: number;
  let base: string;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  /** the Authorization header of every POST /graphql the page sent */
  const graphqlAuthorizations: string[] = [];
  const sockets: string[] = [];
  const problems: string[] = [];
  const callbacks: number[] = [];

  const rest = async (method: 'POST' | 'PUT', url: string, who: TestUser, payload: object, status: number) => {
    const res = await ctx.inject({ method, url: `/api/v2${url}`, headers: { authorization: who.basic, 'content-type': 'application/json' }, payload });
    if (res.statusCode !== status) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res;
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount('Acme Support');
    admin = await ctx.createUser(account, 'admin', { email: 'grace.admin@example.com' });
    ada = await ctx.createUser(account, 'agent', { email: 'ada@example.com' });
    alan = await ctx.createUser(account, 'agent', { email: 'alan@example.com' });
    for (const [user, name] of [[admin, 'Grace Hopper'], [ada, 'Ada Lovelace'], [alan, 'Alan Turing']] as const) {
      await rest('PUT', `/users/${user.id}`, admin, { user: { name } }, 200);
    }
    ({ token } = await insertToken(ctx, admin, { scopes: ['read'] }));
    phoneId = (await rest('POST', '/channels/voice/phone_numbers', admin, { phone_number: { number: '+14155552671' } }, 201)).json().phone_number.id;
    groupId = (await rest('POST', '/groups', admin, { group: { name: 'Callbacks' } }, 201)).json().group.id;
    for (const agent of [ada, alan]) await rest('POST', '/group_memberships', admin, { group_membership: { user_id: Number(agent.id), group_id: groupId } }, 201);

    base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    page.on('request', (r) => {
      requests.push(r.url());
      if (r.url() === `${base}/graphql` && r.method() === 'POST') graphqlAuthorizations.push(r.headers().authorization ?? '');
    });
    page.on('websocket', (ws) => sockets.push(ws.url()));
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()}`));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console: ${m.text()}`);
    });
  });
  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  const row = (kind: 'callback' | 'agent', id: number | bigint) => page.locator(`tr[data-${kind}-id="${id}"]`);
  /** a row's cells as the person reads them */
  const cells = (kind: 'callback' | 'agent', id: number | bigint) => row(kind, id).locator('td').allInnerTexts();
  const stat = (id: string) => page.locator(`#${id}`).innerText();
  /** until the page shows what the check expects (the page changes on its own: no reload, no click) */
  const until = async (what: string, check: () => Promise<boolean>, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for the page to show ${what}`);
      await page.waitForTimeout(50);
    }
  };
  const createCallback = async (requester: string) => {
    const res = await rest('POST', '/channels/voice/callback_requests', admin, {
      callback_request: { phone_number_id: phoneId, requester_phone_number: requester, group_ids: [groupId] },
    }, 201);
    const id = Number(/\/callback_requests\/(\d+)\.json$/.exec(String(res.headers.location))![1]);
    callbacks.push(id);
    return id;
  };

  it('asks for a token on the page, and refuses a wrong one without keeping it', async () => {
    const res = await page.goto(`${base}/voice/queue`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('Voice queue: callbacks and agents, live');
    const input = page.getByLabel('API token');
    await input.waitFor();
    expect(await input.getAttribute('type')).toBe('password');
    expect(await page.locator('#board').isHidden()).toBe(true);

    await input.fill('not-a-token');
    await page.getByRole('button', { name: 'Show the queue' }).click();
    await page.getByRole('alert').filter({ hasText: 'This token was not accepted' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#board').isHidden()).toBe(true);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    // the form was never submitted: the token never went into a URL
    expect(page.url()).toBe(`${base}/voice/queue`);
    expect(graphqlAuthorizations).toEqual(['Bearer not-a-token']);
    await page.screenshot({ path: path.join(SHOTS, '9-voice-queue-sign-in.png') });
    // Chromium reports the refused request (401) in the console: expected here, and only here
    const refused = problems.splice(0).filter((p) => !/status of 401/.test(p));
    expect(refused).toEqual([]);
  });

  it("shows the queue with the admin's token: no callbacks yet, every agent offline, live", async () => {
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Show the queue' }).click();
    await row('agent', ada.id).waitFor({ timeout: 10_000 });
    expect(await cells('agent', ada.id)).toEqual(['Ada Lovelace', 'Offline', '—', '0', '0', '0']);
    expect(await cells('agent', alan.id)).toEqual(['Alan Turing', 'Offline', '—', '0', '0', '0']);
    // admins are agents too
    expect((await cells('agent', admin.id))[0]).toBe('Grace Hopper');
    expect(await page.locator('#callbacks tbody').innerText()).toBe('No callbacks are waiting.');
    expect(await stat('agents-online')).toBe('0');
    expect(await stat('callbacks-waiting')).toBe('0');
    // the token stays in this tab's sessionStorage only
    expect(await page.evaluate<string[]>('Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k))')).toEqual([token]);
    expect(await page.evaluate<number>('localStorage.length')).toBe(0);
    // live: the three subscriptions are held by the server
    await page.locator('#live[data-state="live"]').waitFor({ timeout: 10_000 });
    await until('three subscriptions on the server', async () => ctx.app.eventFeed.subscriptionCount === 3);
    // a mark in this document: gone if anything below reloaded the page
    await page.evaluate('window.sameDocument = true');
  });

  it('shows callbacks created through REST as they are created, in queue order', async () => {
    const first = await createCallback('+12518717081');
    await row('callback', first).waitFor({ timeout: 10_000 });
    const second = await createCallback('+12518717082');
    const third = await createCallback('+12518717083');
    await until('three queued callbacks', async () => (await page.locator('#callbacks tbody tr[data-callback-id]').count()) === 3);
    const [id, requester, line, status, agent, position] = await cells('callback', first);
    expect([id, requester, line, status, agent, position]).toEqual([String(first), '+12518717081', '+1 415 555 2671', 'Queued', '—', '1']);
    expect((await cells('callback', second)).slice(3, 6)).toEqual(['Queued', '—', '2']);
    expect((await cells('callback', third)).slice(3, 6)).toEqual(['Queued', '—', '3']);
    expect(await page.evaluate<string[]>("[...document.querySelectorAll('#callbacks tbody tr')].map((r) => r.dataset.callbackId)")).toEqual(
      [first, second, third].map(String),
    );
    await until('3 callbacks waiting', async () => (await stat('callbacks-waiting')) === '3');
    // the "Waited" column counts on by itself
    expect((await cells('callback', first))[7]).toMatch(/^\d+ s$/);
  });

  it("shows an agent coming online, and the first callback offered to them, as it happens", async () => {
    const [first, second, third] = callbacks;
    await rest('PUT', `/channels/voice/availabilities/${ada.id}`, ada, { availability: { agent_state: 'online' } }, 200);
    await until('Ada online', async () => (await cells('agent', ada.id))[1] === 'Online');
    await until('the first callback offered', async () => (await cells('callback', first))[3] === 'Offered');
    expect((await cells('callback', first)).slice(3, 6)).toEqual(['Offered', 'Ada Lovelace', '—']);
    // the others move up
    await until('the queue to move up', async () => (await cells('callback', second))[5] === '1');
    expect((await cells('callback', third))[5]).toBe('2');
    await until('1 agent online', async () => (await stat('agents-online')) === '1');
    expect(await stat('callbacks-waiting')).toBe('3');
    await page.screenshot({ path: path.join(SHOTS, '9-voice-queue.png'), fullPage: true });
  });

  it('shows the accepted callback dialing with its agent on a call, then gone once answered, and the next one offered', async () => {
    const [first, second] = callbacks;
    await rest('POST', `/channels/voice/callback_requests/${first}/accept`, ada, {}, 200);
    await until('the callback dialing', async () => (await cells('callback', first))[3] === 'Dialing');
    expect((await cells('callback', first))[4]).toBe('Ada Lovelace');
    await until('Ada on a call', async () => (await cells('agent', ada.id))[2] === 'On call');
    expect(await cells('agent', ada.id)).toEqual(['Ada Lovelace', 'Online', 'On call', '1', '0', '0']);
    await page.screenshot({ path: path.join(SHOTS, '9-voice-queue-dialing.png'), fullPage: true });

    await rest('POST', `/channels/voice/callback_requests/${first}/outcome`, ada, { outcome: 'answered' }, 200);
    await until('the answered callback to leave the table', async () => (await row('callback', first).count()) === 0);
    // Ada is free again (no wrap-up time): the next callback is hers
    await until('the next callback offered to Ada', async () => (await cells('callback', second))[3] === 'Offered');
    expect((await cells('callback', second))[4]).toBe('Ada Lovelace');
    await until("Ada's completed count", async () => (await cells('agent', ada.id)).join('|') === 'Ada Lovelace|Online|—|1|0|1');
    await until('2 callbacks waiting', async () => (await stat('callbacks-waiting')) === '2');
    await page.screenshot({ path: path.join(SHOTS, '9-voice-queue-after.png'), fullPage: true });
  });

  it('did all that without a reload, over one WebSocket to this server, with the token the person gave', async () => {
    expect(await page.evaluate<boolean | undefined>('window.sameDocument')).toBe(true);
    expect(sockets).toEqual([`${base.replace(/^http/, 'ws')}/graphql`]);
    expect(graphqlAuthorizations.slice(1).every((a) => a === `Bearer ${token}`)).toBe(true);
  });

  it('keeps the token across a reload of the tab, and forgets it on sign-out', async () => {
    await page.reload();
    await row('agent', ada.id).waitFor({ timeout: 10_000 });
    expect(await page.getByLabel('API token').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await row('agent', ada.id).count()).toBe(0);
    // and its subscriptions end with it
    await until('no subscription left on the server', async () => ctx.app.eventFeed.subscriptionCount === 0);
  });

  it('needed nothing but this server: no other origin, no failed request, no script error, no policy violation', () => {
    expect(requests.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:'))).toEqual([]);
    expect(requests).toContain(`${base}/voice/queue/assets/graphql-ws@6.4.2/graphql-ws.min.js`);
    expect(problems).toEqual([]);
  });
});
