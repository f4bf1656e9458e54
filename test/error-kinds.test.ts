import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../src/app';
import { createDb, type Db } from '../src/db/create-db';
import { createServices } from '../src/domain/services';
import { claimKdfTurn, MAX_CONCURRENT_KDF, MAX_WAITING_KDF } from '../src/domain/auth/kdf-queue';
import { clientOf } from '../src/domain/auth/client-address';
import { RFC7636 } from './helpers/oauth-server';
import { basicHeader, createTestApp, DEFAULT_LIMITS, TEST_HASH_KEY, type TestContext } from './helpers/test-app';

// docs/api.md "Errors": an error's kind fixes its status and Retry-After once,
// whichever protocol answers: REST, GraphQL, the OAuth grant endpoint and the
// authorization pages. The same cause answers alike on all of them.

const FORM = 'application/x-www-form-urlencoded';
const AUTHORIZE_QUERY = new URLSearchParams({ response_type: 'code', client_id: 'some-client', redirect_uri: 'https://app.example.com/cb', state: 's' });

/** status and Retry-After of an answer */
function head(res: LightMyRequestResponse) {
  return { status: res.statusCode, retryAfter: res.headers['retry-after'] };
}

describe('the database out of reach answers 503 with the same Retry-After on every protocol', () => {
  let db: Db;
  let app: App;

  beforeAll(async () => {
    // Nothing listens on port 1: a real connection failure.
    db = await createDb({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none', poolSize: 2 });
    app = await buildApp({ db, services: createServices({ db, hashKey: TEST_HASH_KEY, limits: DEFAULT_LIMITS }), config: { hashKey: TEST_HASH_KEY, graphqlIntrospection: true, logLevel: 'silent' }, logger: false });
    await app.fastify.ready();
  });
  afterAll(async () => {
    await app.fastify.close();
    await db.close();
  });

  it('REST, GraphQL (Basic and Bearer), the token endpoint and the authorization page: 503, Retry-After: 5', async () => {
    const basic = basicHeader('someone@example.com', 'a-password');
    const rest = await app.fastify.inject({ method: 'GET', url: '/api/v2/oauth/clients.json', headers: { authorization: basic } });
    const graphqlBasic = await app.fastify.inject({
      method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: basic }, payload: { query: '{ me { id } }' },
    });
    const graphqlBearer = await app.fastify.inject({
      method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: 'Bearer abcdefghijklmnopqrstuvwxyz0123456789' }, payload: { query: '{ me { id } }' },
    });
    const token = await app.fastify.inject({
      method: 'POST', url: '/oauth/tokens', headers: { 'content-type': FORM, authorization: basicHeader('some-client', 'some-secret') }, payload: 'grant_type=client_credentials',
    });
    const page = await app.fastify.inject({ method: 'GET', url: `/oauth/authorizations/new?${AUTHORIZE_QUERY}` });

    const expected = { status: 503, retryAfter: '5' };
    expect({ rest: head(rest), graphqlBasic: head(graphqlBasic), graphqlBearer: head(graphqlBearer), token: head(token), page: head(page) })
      .toEqual({ rest: expected, graphqlBasic: expected, graphqlBearer: expected, token: expected, page: expected });
    expect(rest.json()).toEqual({ error: 'ServiceUnavailable', description: expect.any(String) });
    expect(graphqlBasic.json().errors[0].extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
    expect(graphqlBearer.json().errors[0].extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
    expect(token.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('Please try again');
  });
});

describe('signing in: the same cause answers alike on REST, GraphQL and the login page', () => {
  let ctx: TestContext;
  let clientId: string;
  let clientAccount: bigint;
  const WINDOW = 300;

  beforeAll(async () => {
    ctx = await createTestApp({ limits: { loginFailures: 2, loginWindowSeconds: WINDOW } });
    const account = await ctx.createAccount();
    clientAccount = account;
    const admin = await ctx.createUser(account, 'admin');
    const created = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: admin.basic },
      payload: { name: 'App', client_type: 'public', scopes: 'read', redirect_uris: ['https://app.example.com/cb'] },
    });
    expect(created.statusCode).toBe(201);
    clientId = created.json().client_identifier;
  });
  afterAll(() => ctx.close());

  /** signs in on the authorization page's form, as a browser would: the CSRF cookie and token from the login page first */
  async function pageLogin(email: string, password: string) {
    const query = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: 'https://app.example.com/cb', state: 's', code_challenge: RFC7636.challenge, code_challenge_method: 'S256',
    });
    const login = await ctx.inject({ method: 'GET', url: `/oauth/authorizations/new?${query}` });
    expect(login.statusCode).toBe(200);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.body)![1];
    const cookie = login.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const form = new URLSearchParams({ ...Object.fromEntries(query), csrf_token: csrf, email, password });
    return ctx.inject({ method: 'POST', url: '/oauth/authorizations/login', headers: { 'content-type': FORM, cookie }, payload: form.toString() });
  }

  it('REST, GraphQL and the login page: 429 and one Retry-After, also in GraphQL extensions', async () => {
    // a user of the client's account: the login page signs in there, and the failures
    // count per (account, email), so the plain host must name the same account's user
    const user = await ctx.createUser(clientAccount, 'agent');
    const wrong = basicHeader(user.email, 'not-the-password');
    for (let i = 0; i < 2; i++) expect((await ctx.inject({ method: 'GET', url: '/api/v2/users/me.json', headers: { authorization: wrong } })).statusCode).toBe(401);

    const rest = await ctx.inject({ method: 'GET', url: '/api/v2/users/me.json', headers: { authorization: user.basic } });
    const graphql = await ctx.graphql('{ me { id } }', {}, { authorization: user.basic });
    const page = await pageLogin(user.email, user.password);

    const answers = { rest: head(rest), graphql: head(graphql), page: head(page) };
    const seconds = Object.values(answers).map((a) => Number(a.retryAfter));
    expect(Object.values(answers).map((a) => a.status)).toEqual([429, 429, 429]);
    for (const s of seconds) {
      expect(s).toBeGreaterThanOrEqual(1);
      expect(s).toBeLessThanOrEqual(WINDOW);
    }
    // the same window: a second boundary may pass between the three requests, no more
    expect(Math.max(...seconds) - Math.min(...seconds)).toBeLessThanOrEqual(1);
    expect(rest.json()).toEqual({ error: 'TooManyRequests', description: 'Too many failed login attempts; try again later' });
    expect(graphql.json().errors[0].extensions).toEqual({ code: 'RATE_LIMITED', retryAfter: Number(graphql.headers['retry-after']) });
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('Too many attempts');
  });

  it('a full password-verification queue: 503 and its own Retry-After (1) on REST, GraphQL and the login page', async () => {
    const account = await ctx.createAccount();
    const user = await ctx.createUser(account, 'agent');
    // every place the address of inject's peer (127.0.0.1) may hold, as a burst of guesses from it would
    const held = Array.from({ length: MAX_CONCURRENT_KDF + MAX_WAITING_KDF }, () => claimKdfTurn(clientOf('127.0.0.1')));
    try {
      const rest = await ctx.inject({ method: 'GET', url: '/api/v2/users/me.json', headers: { authorization: user.basic } });
      const graphql = await ctx.graphql('{ me { id } }', {}, { authorization: user.basic });
      const page = await pageLogin(user.email, user.password);
      const expected = { status: 503, retryAfter: '1' };
      expect({ rest: head(rest), graphql: head(graphql), page: head(page) }).toEqual({ rest: expected, graphql: expected, page: expected });
      expect(graphql.json().errors[0].extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', retryAfter: 1 });
      expect(page.body).toContain('The service is busy');
    } finally {
      for (const turn of held) turn.release();
    }
  });
});
