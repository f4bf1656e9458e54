import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, validate } from 'graphql';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { createTestApp, insertToken, type TestContext } from './helpers/test-app';
import { ROOT } from './helpers/processes';

// The live queue page at /voice/queue without a browser: what the server sends (headers,
// policy, assets), and the operations its script runs, against the schema and the server
// (test/voice-queue.browser.test.ts drives the page in Chromium).

const SCRIPT = readFileSync(path.join(ROOT, 'src/http/pages/voice-queue/voice-queue.js'), 'utf8');
/** the query and the subscriptions, as written in the script */
const QUERY = /const QUERY = `([^`]+)`;/.exec(SCRIPT)![1];
const SUBSCRIPTIONS = [...SCRIPT.matchAll(/'(subscription \w+ \{[^']+\})'/g)].map((m) => m[1]);

/** The page's <script src> and <link href> URLs, resolved against /voice/queue. */
function assetsOf(html: string): { scripts: string[]; styles: string[] } {
  const url = (ref: string) => new URL(ref, 'http://x/voice/queue').pathname;
  return {
    scripts: [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => url(m[1])),
    styles: [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => url(m[1])),
  };
}

describe('GET /voice/queue', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    // the page does not depend on introspection (it runs fixed operations): served with it off too
    ctx = await createTestApp({ graphqlIntrospection: false });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('serves the page without credentials, under a policy of this server only, with no inline script or style', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/voice/queue' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(String(res.headers['content-security-policy']).split('; ')).toEqual([
      "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:",
      "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
    ]);
    expect(res.body).toContain('<title>Voice queue: callbacks and agents, live</title>');
    // every script is a file of this server, every style sheet too; nothing from elsewhere
    const scriptTags = [...res.body.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scriptTags).toHaveLength(2);
    for (const tag of scriptTags) expect(tag).toMatch(/^<script src="queue\/assets\/[^"]+">$/);
    expect(res.body).not.toMatch(/<style|\sstyle="|https?:\/\/|\son\w+="/);
    // the form's field is labelled, and the tables have column headers
    expect(res.body).toMatch(/<label for="token">API token<\/label>\n<input id="token" name="token" type="password"/);
    expect(res.body.match(/<th scope="col"/g)).toHaveLength(14);
  });

  it('serves the assets the page names, with their content types and a long cache: its own files by content hash, graphql-ws by version', async () => {
    const { scripts, styles } = assetsOf((await ctx.inject({ method: 'GET', url: '/voice/queue' })).body);
    expect(scripts).toEqual(['/voice/queue/assets/graphql-ws@6.4.2/graphql-ws.min.js', expect.stringMatching(/^\/voice\/queue\/assets\/voice-queue\.[0-9a-f]{12}\.js$/)]);
    expect(styles).toEqual([expect.stringMatching(/^\/voice\/queue\/assets\/voice-queue\.[0-9a-f]{12}\.css$/)]);
    for (const [url, type] of [...scripts.map((u) => [u, 'text/javascript; charset=utf-8']), [styles[0], 'text/css; charset=utf-8']]) {
      const res = await ctx.inject({ method: 'GET', url });
      expect([url, res.statusCode, res.headers['content-type'], res.headers['cache-control']]).toEqual([url, 200, type, 'public, max-age=31536000, immutable']);
    }
    expect((await ctx.inject({ method: 'GET', url: scripts[1] })).body).toBe(SCRIPT);
    const installed = readFileSync(path.join(path.dirname(require.resolve('graphql-ws/package.json')), 'umd/graphql-ws.min.js'));
    expect((await ctx.inject({ method: 'GET', url: scripts[0] })).rawPayload.equals(installed)).toBe(true);
  });

  it('answers an unknown asset with 404 in the error envelope', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/voice/queue/assets/voice-queue.000000000000.js' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'RecordNotFound', description: 'Not found' });
  });

  it("the script's operations are valid against the schema", () => {
    expect(SUBSCRIPTIONS).toHaveLength(3);
    const schema = buildGraphQLSchema();
    for (const document of [QUERY, ...SUBSCRIPTIONS]) expect([document, validate(schema, parse(document))]).toEqual([document, []]);
  });

  it("the script's query, with an agent's read token, answers within the API's limits; an end user's is FORBIDDEN", async () => {
    const account = await ctx.createAccount();
    const agent = await ctx.createUser(account, 'agent');
    const endUser = await ctx.createUser(account, 'end_user');
    const send = async (token: string) =>
      (await ctx.graphql(QUERY, undefined, { authorization: `Bearer ${token}` })).json() as { data: Record<string, unknown> | null; errors?: { extensions: { code: string } }[] };
    const answer = await send((await insertToken(ctx, agent, { scopes: ['read'] })).token);
    expect(answer.errors).toBeUndefined();
    expect(answer.data).toMatchObject({
      currentQueueActivity: { agentsOnline: 0, callbacksWaiting: 0 },
      agentsActivity: [expect.objectContaining({ agentId: String(agent.id), agentState: 'OFFLINE' })],
      queued: { totalCount: 0, edges: [] },
    });
    const refused = await send((await insertToken(ctx, endUser, { scopes: ['read'] })).token);
    expect(refused.errors?.[0].extensions.code).toBe('FORBIDDEN');
  });
});
