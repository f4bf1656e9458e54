import http from 'node:http';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "CORS": with CORS_ORIGINS, the APIs (GraphQL, /api/v2, the grant and
// revocation endpoints) answer the listed origins' preflights and requests with CORS
// headers; nothing else does, and nothing does without CORS_ORIGINS. Over real HTTP,
// with the Origin header a browser sends (node:http, so that nothing filters it).

const DASHBOARD = 'https://dashboard.example.com';
const LOCAL = 'http://localhost:5173';

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: string }

function send(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const preflight = (base: string, path: string, origin: string, method: string, requestHeaders = 'authorization,content-type') =>
  send(base, 'OPTIONS', path, { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders });

/** the CORS headers of an answer (none at all, for an origin or a route CORS does not cover) */
const corsHeaders = (a: Answer) => Object.keys(a.headers).filter((h) => h.startsWith('access-control-'));

describe('CORS (docs/api.md, "CORS")', () => {
  describe('without CORS_ORIGINS', () => {
    let ctx: TestContext;
    let base: string;
    beforeAll(async () => {
      ctx = await createTestApp();
      base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(() => ctx.close());

    it('sends no CORS header at all, to a preflight or a request from any origin', async () => {
      const answers = [
        await preflight(base, '/graphql', DASHBOARD, 'POST'),
        await preflight(base, '/api/v2/users/me.json', DASHBOARD, 'GET'),
        await send(base, 'GET', '/api/v2/users/me.json', { origin: DASHBOARD }),
        await send(base, 'POST', '/graphql', { origin: DASHBOARD, 'content-type': 'application/json' }, JSON.stringify({ query: '{ __typename }' })),
      ];
      for (const a of answers) {
        expect(corsHeaders(a)).toEqual([]);
        expect(String(a.headers.vary ?? '')).not.toMatch(/origin/i);
      }
    });
  });

  describe('with CORS_ORIGINS listing two origins', () => {
    let ctx: TestContext;
    let base: string;
    let admin: TestUser;
    let bearer: string;
    beforeAll(async () => {
      ctx = await createTestApp({ corsOrigins: [DASHBOARD, LOCAL] });
      admin = await ctx.createUser(await ctx.createAccount(), 'admin');
      bearer = `Bearer ${(await insertToken(ctx, admin, { scopes: ['read', 'write'] })).token}`;
      base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(() => ctx.close());

    it("answers a listed origin's preflight on REST: 204, that origin, the methods and headers the API takes, cached 10 minutes, no credentials", async () => {
      for (const origin of [DASHBOARD, LOCAL]) {
        const a = await preflight(base, '/api/v2/oauth/clients/1.json', origin, 'DELETE', 'authorization');
        expect(a.status).toBe(204);
        expect(a.body).toBe('');
        expect(a.headers).toMatchObject({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
          'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id, X-On-Behalf-Of',
          'access-control-max-age': '600',
        });
        expect(a.headers['access-control-allow-credentials']).toBeUndefined();
        expect(String(a.headers.vary)).toMatch(/\bOrigin\b/);
      }
    });

    it("answers a listed origin's preflight on GraphQL, with the headers Apollo and its clients send", async () => {
      const a = await preflight(base, '/graphql', DASHBOARD, 'POST', 'authorization,content-type,apollo-require-preflight');
      expect(a.status).toBe(204);
      expect(a.headers).toMatchObject({
        'access-control-allow-origin': DASHBOARD,
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id, X-On-Behalf-Of, Apollo-Require-Preflight, X-Apollo-Operation-Name',
      });
    });

    it("gives a listed origin's requests the origin and the headers a page may read: rate limit, Retry-After, Location, request id", async () => {
      const rest = await send(base, 'GET', '/api/v2/users/me.json', { origin: DASHBOARD, authorization: bearer });
      expect(rest.status).toBe(200);
      expect(JSON.parse(rest.body).user.email).toBe(admin.email);
      const gql = await send(base, 'POST', '/graphql', { origin: DASHBOARD, authorization: bearer, 'content-type': 'application/json' }, JSON.stringify({ query: '{ me { email } }' }));
      expect(gql.status).toBe(200);
      expect(JSON.parse(gql.body).data.me.email).toBe(admin.email);
      // an error answer carries them too, so that the page can read it
      const refused = await send(base, 'GET', '/api/v2/users/me.json', { origin: DASHBOARD });
      expect(refused.status).toBe(401);
      for (const a of [rest, gql, refused]) {
        expect(a.headers['access-control-allow-origin']).toBe(DASHBOARD);
        expect(a.headers['access-control-expose-headers']).toBe('X-Rate-Limit, X-Rate-Limit-Remaining, Retry-After, Location, X-Request-Id, WWW-Authenticate');
        expect(a.headers['access-control-allow-credentials']).toBeUndefined();
      }
    });

    it('covers the grant and revocation endpoints and the metadata (a single-page app with PKCE), not the authorization pages, introspection, health or metrics', async () => {
      for (const path of ['/oauth/tokens', '/oauth/revoke']) {
        const a = await preflight(base, path, DASHBOARD, 'POST', 'content-type');
        expect(a.status).toBe(204);
        expect(a.headers).toMatchObject({ 'access-control-allow-origin': DASHBOARD, 'access-control-allow-methods': 'POST' });
      }
      const metadata = await send(base, 'GET', '/.well-known/oauth-authorization-server', { origin: DASHBOARD });
      expect(metadata.status).toBe(200);
      expect(metadata.headers['access-control-allow-origin']).toBe(DASHBOARD);
      expect((await preflight(base, '/.well-known/oauth-authorization-server', DASHBOARD, 'GET', 'x-request-id')).headers).toMatchObject({ 'access-control-allow-origin': DASHBOARD, 'access-control-allow-methods': 'GET' });
      const token = await send(base, 'POST', '/oauth/tokens', { origin: DASHBOARD, 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials');
      // (refused: no client authentication) with the origin, so that the app can read the RFC 6749 error
      expect(token.status).toBe(400);
      expect(JSON.parse(token.body).error).toEqual(expect.any(String));
      expect(token.headers['access-control-allow-origin']).toBe(DASHBOARD);

      for (const path of ['/oauth/authorizations/new?response_type=code&client_id=x', '/oauth/authorizations/login', '/oauth/introspect', '/healthz', '/readyz', '/metrics', '/api/docs', '/graphiql']) {
        for (const method of ['GET', 'POST']) {
          expect({ path, method, headers: corsHeaders(await preflight(base, path, DASHBOARD, method)) }).toEqual({ path, method, headers: [] });
          expect({ path, method, headers: corsHeaders(await send(base, method, path, { origin: DASHBOARD })) }).toEqual({ path, method, headers: [] });
        }
      }
    });

    it('gives an unlisted origin nothing: no allow header on its preflight (the browser blocks), none on its requests', async () => {
      const unlisted = ['https://evil.example.com', 'https://dashboard.example.com.evil.com', 'http://dashboard.example.com', 'https://dashboard.example.com:8443', 'http://localhost:5174', 'null', 'HTTPS://DASHBOARD.EXAMPLE.COM'];
      for (const origin of unlisted) {
        const answers = [
          await preflight(base, '/graphql', origin, 'POST'),
          await preflight(base, '/api/v2/users/me.json', origin, 'GET'),
          await send(base, 'GET', '/api/v2/users/me.json', { origin, authorization: bearer }),
        ];
        for (const a of answers) expect({ origin, headers: corsHeaders(a) }).toEqual({ origin, headers: [] });
        // the REST preflight of an unlisted origin is an unknown route, in the envelope
        expect(answers[1].status).toBe(404);
        expect(JSON.parse(answers[1].body)).toEqual({ error: 'RecordNotFound', description: 'Not found' });
        // the request itself still runs as any request without CORS would (the browser withholds its answer)
        expect(answers[2].status).toBe(200);
      }
    });

    it('answers an OPTIONS that is no preflight (no Access-Control-Request-Method) as an unknown route, in the envelope', async () => {
      const a = await send(base, 'OPTIONS', '/api/v2/users/me.json', { origin: DASHBOARD });
      expect(a.status).toBe(404);
      expect(JSON.parse(a.body)).toEqual({ error: 'RecordNotFound', description: 'Not found' });
      expect(a.headers['access-control-allow-methods']).toBeUndefined();
    });
  });
});
