import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, validate } from 'graphql';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { EXAMPLE_DOCUMENT, EXAMPLE_HEADERS } from '../src/graphql/example-document';

// The offline GraphQL explorer at /graphiql, and the operation both explorers start
// from, without a browser (test/graphiql.browser.test.ts drives the page in Chromium).

/** The bytes of a file of an installed package, found the way a reader would find it. */
const installed = (pkg: string, file: string) => readFileSync(path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file));

/** The page's <script src> and <link href> URLs, resolved against /graphiql. */
function assetsOf(html: string): { scripts: string[]; styles: string[] } {
  const url = (ref: string) => new URL(ref, 'http://x/graphiql').pathname;
  return {
    scripts: [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => url(m[1])),
    styles: [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => url(m[1])),
  };
}

describe('GET /graphiql (introspection on)', () => {
  let ctx: TestContext;
  let admin: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('serves the page without credentials, with a Content-Security-Policy that allows no inline script', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/graphiql' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    const csp = String(res.headers['content-security-policy']).split(/;\s*/);
    expect(csp).toEqual(
      expect.arrayContaining(["default-src 'none'", "script-src 'self'", "connect-src 'self'", "img-src 'self' data:", "frame-ancestors 'none'"]),
    );
    expect(csp.find((d) => d.startsWith('script-src'))).not.toMatch(/unsafe/);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.body).toMatch(/<title>GraphiQL: Help desk GraphQL API \(offline explorer\)<\/title>/);
    // every script is a file of this server: no inline code, no other origin
    const scriptTags = [...res.body.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scriptTags.length).toBe(5);
    for (const tag of scriptTags) expect(tag).toMatch(/^<script src="graphiql\/assets\/[^"]+">$/);
    expect(res.body).not.toMatch(/<style|style="|https?:\/\//);
  });

  it('serves the assets the page names, from the installed packages, with their content types and a long cache', async () => {
    const { scripts, styles } = assetsOf((await ctx.inject({ method: 'GET', url: '/graphiql' })).body);
    expect(scripts).toEqual([
      '/graphiql/assets/react@18.3.1/react.production.min.js',
      '/graphiql/assets/react-dom@18.3.1/react-dom.production.min.js',
      '/graphiql/assets/graphiql@4.1.2/graphiql.min.js',
      '/graphiql/assets/graphql-ws@6.4.2/graphql-ws.min.js',
      expect.stringMatching(/^\/graphiql\/assets\/start\.[0-9a-f]{12}\.js$/),
    ]);
    expect(styles).toEqual(['/graphiql/assets/graphiql@4.1.2/graphiql.min.css', expect.stringMatching(/^\/graphiql\/assets\/page\.[0-9a-f]{12}\.css$/)]);
    for (const url of scripts) {
      const res = await ctx.inject({ method: 'GET', url });
      expect([url, res.statusCode, res.headers['content-type']]).toEqual([url, 200, 'text/javascript; charset=utf-8']);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    for (const url of styles) {
      const res = await ctx.inject({ method: 'GET', url });
      expect([url, res.statusCode, res.headers['content-type']]).toEqual([url, 200, 'text/css; charset=utf-8']);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    expect((await ctx.inject({ method: 'GET', url: scripts[2] })).rawPayload.equals(installed('graphiql', 'graphiql.min.js'))).toBe(true);
    expect((await ctx.inject({ method: 'GET', url: scripts[0] })).rawPayload.equals(installed('react', 'umd/react.production.min.js'))).toBe(true);
    expect((await ctx.inject({ method: 'GET', url: styles[0] })).rawPayload.equals(installed('graphiql', 'graphiql.min.css'))).toBe(true);
    // the start-up script carries the default document and the headers template
    const start = (await ctx.inject({ method: 'GET', url: scripts[4] })).body;
    expect(start).toContain(JSON.stringify(EXAMPLE_DOCUMENT));
    expect(start).toContain(JSON.stringify(JSON.stringify(EXAMPLE_HEADERS, null, 2)));
  });

  it('answers an unknown asset with 404 in the error envelope', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/graphiql/assets/graphiql@4.1.2/graphiql.js.map' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'RecordNotFound', description: 'Not found' });
  });

  it('opens Apollo Sandbox on GET /graphql with the same default document and headers template', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    // Apollo embeds the Sandbox's configuration in the page as a JSON literal
    const literal = /var embeddedSandboxConfig = (\{.*\});/.exec(res.body)?.[1];
    expect(literal).toBeDefined();
    const config = JSON.parse(literal!) as { initialState: { document?: string; headers?: Record<string, string> } };
    expect(config.initialState.document).toBe(EXAMPLE_DOCUMENT);
    expect(config.initialState.headers).toEqual({ Authorization: 'Bearer <token>' });
  });

  it('the default document is a valid operation against the schema', () => {
    expect(validate(buildGraphQLSchema(), parse(EXAMPLE_DOCUMENT))).toEqual([]);
  });

  it('the default document, sent as GraphiQL sends it (POST, JSON) with a Bearer token, answers the viewer and their tokens', async () => {
    const { token, id } = await insertToken(ctx, admin);
    const res = await ctx.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      payload: { query: EXAMPLE_DOCUMENT, operationName: 'Me' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { data: { me: { email: string; authenticatedVia: string }; oauthTokens: { edges: { node: { id: string } }[] } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data.me).toMatchObject({ email: admin.email, authenticatedVia: 'bearer' });
    expect(body.data.oauthTokens.edges.map((e) => e.node.id)).toContain(String(id));
  });

  it('the default document without credentials answers UNAUTHENTICATED, as the comment in it says', async () => {
    const res = await ctx.graphql(EXAMPLE_DOCUMENT);
    expect(res.json()).toMatchObject({ data: null, errors: [expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED' } })] });
  });
});

describe('GET /graphiql with introspection off (GRAPHQL_INTROSPECTION=false)', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestApp({ graphqlIntrospection: false });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it.each(['/graphiql', '/graphiql/assets/graphiql@4.1.2/graphiql.min.js', '/graphiql/assets/react@18.3.1/react.production.min.js'])(
    'answers %s with 404 in the error envelope',
    async (url) => {
      const res = await ctx.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.json()).toEqual({ error: 'RecordNotFound', description: 'Not found' });
    },
  );
});
