import { specifiedRules, validate } from 'graphql';
import type { LightMyRequestResponse } from 'fastify';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { GRAPHQL_LIMITS, graphqlLimits } from '../src/graphql/limits';
import { restRoutes } from '../src/rest/routes';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "GraphQL": depth ≤ 8, aliases ≤ 15, a cost budget, a token limit, no HTTP
// batching, no field suggestions when introspection is off, CSRF prevention on.
// Every rejection is a GraphQL error with a clear message and HTTP 400, and
// nothing of the operation runs.

const json = { 'content-type': 'application/json' };

/** The heaviest page a dashboard asks for: 100 tokens with every field, their client and user. */
const FULL_TOKEN_PAGE = `oauthTokens(first: 100) {
  totalCount
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  edges { cursor node {
    id token clientId userId scopes createdAt expiresAt usedAt refreshToken url
    client { id name clientIdentifier }
    user { id email name role }
  } }
}`;
const FULL_CALLBACK_PAGE = `callbackRequests(first: 100) {
  totalCount
  pageInfo { hasNextPage endCursor }
  edges { cursor node { id status phoneNumberId requesterPhoneNumber queuePosition requestedGroupIds routedGroupIds createdAt createdById } }
}`;
const CLIENTS_WITH_TOKENS = `oauthClients {
  id name company clientIdentifier clientSecret clientType redirectUris scopes agentId createDate updateDate
  tokens { id token scopes createdAt expiresAt usedAt user { id email name role } }
}`;

/** A selection `levels` fields deep, walking the token ↔ client cycle. */
function deepQuery(levels: number): string {
  // first: 1 keeps the cycle within the cost budget, so only the depth is judged
  const path = ['oauthTokens(first: 1)', 'edges', 'node', 'client', 'tokens', 'client', 'tokens', 'client', 'tokens', 'client'];
  const fields = path.slice(0, levels - 1);
  return `{ ${fields.map((f) => `${f} {`).join(' ')} id ${'}'.repeat(fields.length)} }`;
}

function rejection(res: LightMyRequestResponse): { message: string; code: string } {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect(body.data ?? undefined).toBeUndefined();
  expect(body.errors).toHaveLength(1);
  return { message: body.errors[0].message, code: body.errors[0].extensions?.code };
}

function expectData(res: LightMyRequestResponse): Record<string, any> {
  const body = res.json();
  expect(body.errors).toBeUndefined();
  expect(res.statusCode).toBe(200);
  return body.data;
}

describe('GraphQL limits (docs/api.md, "GraphQL")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  const asAdmin = (query: string) => ctx.graphql(query, {}, { authorization: admin.basic });

  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
    // some data, so that the allowed queries really resolve nested fields
    for (let i = 0; i < 3; i++) await insertToken(ctx, admin);
  });
  afterAll(() => ctx.close());

  describe('depth ≤ 8', () => {
    it('runs a query 8 fields deep', async () => {
      const data = expectData(await asAdmin(deepQuery(8)));
      expect(data.oauthTokens.edges[0].node.client.tokens[0].client.tokens[0].id).toMatch(/^\d+$/);
    });

    it('refuses 9 fields deep with a message naming the limit', async () => {
      const { message, code } = rejection(await asAdmin(deepQuery(9)));
      expect(code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(message).toBe('Query depth limit of 8 exceeded, found 9.');
    });

    it('counts a fragment as the fields it stands for', async () => {
      const fragment = 'fragment C on OAuthToken { client { tokens { client { tokens { id } } } } }';
      const eight = await asAdmin(`query { oauthTokens(first: 1) { edges { node { ...C } } } } ${fragment}`);
      expect(expectData(eight).oauthTokens.edges).toHaveLength(1);
      const nine = await asAdmin(`query { oauthTokens(first: 1) { edges { node { ... on OAuthToken { user { id } ...C } } } } } ${fragment.replace('{ id }', '{ user { id } }')}`);
      expect(rejection(nine).message).toBe('Query depth limit of 8 exceeded, found 9.');
    });
  });

  describe('aliases ≤ 15', () => {
    const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `me${i}: me { id }`).join(' ')} }`;

    it('runs 15 aliases', async () => {
      const data = expectData(await asAdmin(aliased(15)));
      expect(Object.keys(data)).toHaveLength(15);
      expect(data.me14.id).toBe(String(admin.id));
    });

    it('refuses 16 aliases', async () => {
      const { message, code } = rejection(await asAdmin(aliased(16)));
      expect(code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(message).toBe('Aliases limit of 15 exceeded, found 16.');
    });
  });

  describe(`cost budget (${GRAPHQL_LIMITS.maxCost})`, () => {
    it('runs the heaviest dashboard request: a full page of tokens and a full page of callback requests', async () => {
      const data = expectData(await asAdmin(`{ ${FULL_TOKEN_PAGE} ${FULL_CALLBACK_PAGE} }`));
      expect(data.oauthTokens.totalCount).toBe(3);
      expect(data.oauthTokens.edges[0].node).toMatchObject({ client: { name: 'test client' }, user: { email: admin.email } });
      expect(data.callbackRequests.edges).toEqual([]);
    });

    it('runs the clients page with every live token of each client', async () => {
      const data = expectData(await asAdmin(`{ ${CLIENTS_WITH_TOKENS} }`));
      expect(data.oauthClients).toHaveLength(3);
      expect(data.oauthClients[0].tokens[0].user.email).toBe(admin.email);
    });

    it('runs the query of the brief: tokens with client name and user email', async () => {
      const data = expectData(await asAdmin('{ oauthTokens(first: 100) { edges { node { id client { name } user { email } } } } }'));
      expect(data.oauthTokens.edges).toHaveLength(3);
    });

    // introspection is priced at the schema's size (test/graphql-introspection.test.ts); records beside it are not
    it('still prices a page of records reached under introspection-sized selections', async () => {
      const res = await asAdmin(`{ __schema { types { name } } a: ${CLIENTS_WITH_TOKENS} b: ${CLIENTS_WITH_TOKENS} }`);
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].message).toMatch(/Query cost limit of 120000 exceeded/);
    });

    const DEEP_WITH_VARIABLE = 'query Deep($n: Int) { oauthTokens(first: $n) { edges { node { client { tokens { client { tokens { id } } } } } } } }';

    it.each([
      ['two clients pages with all their tokens, under aliases', `{ a: ${CLIENTS_WITH_TOKENS} b: ${CLIENTS_WITH_TOKENS} }`, {}, 222_402],
      ['the client ↔ tokens cycle: clients → tokens → client → tokens', '{ oauthClients { tokens { client { tokens { id } } } } }', {}, 1_020_101],
      ['a page size given as a variable ($n = 100) on a nested cycle', DEEP_WITH_VARIABLE, { n: 100 }, 1_020_401],
    ])('refuses %s with 400, naming the budget and the cost, and runs nothing', async (_name, query, variables, cost) => {
      const res = await ctx.graphql(query, variables, { authorization: admin.basic });
      expect(res.statusCode).toBe(400);
      const { message, code } = rejection(res);
      expect(code).toBe('BAD_REQUEST');
      expect(message).toBe(`Query cost limit of ${GRAPHQL_LIMITS.maxCost} exceeded, found ${cost}.`);
      expect(res.json().data).toBeUndefined();
    });

    it('counts a page size given as a variable: the same document with $n = 1 runs', async () => {
      const res = await ctx.graphql(DEEP_WITH_VARIABLE, { n: 1 }, { authorization: admin.basic });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.oauthTokens.edges).toHaveLength(1);
    });

    it('remembers costs per variables: $n = 100, 1, 100, 1 are refused, run, refused, run', async () => {
      const statuses = [];
      for (const n of [100, 1, 100, 1]) statuses.push((await ctx.graphql(DEEP_WITH_VARIABLE, { n }, { authorization: admin.basic })).statusCode);
      expect(statuses).toEqual([400, 200, 400, 200]);
    });
  });

  describe(`token limit (${GRAPHQL_LIMITS.maxTokens})`, () => {
    // `{ me { … } }`: 5 tokens around the fields. Several names, because graphql-js
    // itself refuses a thousand copies of one field (its overlapping-fields budget).
    const names = ['id', 'name', 'email', 'role', 'active', 'createdAt', 'authenticatedVia'];
    const withTokens = (n: number) => `{ me { ${Array.from({ length: n - 5 }, (_, i) => names[i % names.length]).join(' ')} } }`;

    it('parses a document of exactly the limit', async () => {
      expect(expectData(await asAdmin(withTokens(GRAPHQL_LIMITS.maxTokens))).me.id).toBe(String(admin.id));
    });

    it('refuses one token more while parsing, before validation or execution', async () => {
      const { message, code } = rejection(await asAdmin(withTokens(GRAPHQL_LIMITS.maxTokens + 1)));
      expect(code).toBe('GRAPHQL_PARSE_FAILED');
      expect(message).toMatch(/Document contains more th\w+ 1000 tokens\. Parsing aborted\./);
    });
  });

  describe('no HTTP batching', () => {
    it('refuses an array of operations and runs none of them', async () => {
      const create = {
        query: 'mutation { createOAuthClient(input: { name: "batched", scopes: "read", redirectUris: ["https://x.example/cb"] }) { id } }',
      };
      const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { ...json, authorization: admin.basic }, payload: JSON.stringify([create, create]) });
      const { message, code } = rejection(res);
      expect(code).toBe('BAD_REQUEST');
      expect(message).toMatch(/batching/i);
      expect(await ctx.db.prisma.oAuthClient.count({ where: { name: 'batched' } })).toBe(0);
    });
  });

  describe('CSRF prevention', () => {
    const createClient = 'mutation { createOAuthClient(input: { name: "csrf", scopes: "read", redirectUris: ["https://x.example/cb"] }) { id } }';

    it('refuses a GET query without a preflight header (a browser could send it cross-site)', async () => {
      const res = await ctx.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent('{ me { email } }')}`, headers: { authorization: admin.basic } });
      const { message, code } = rejection(res);
      expect(code).toBe('BAD_REQUEST');
      expect(message).toMatch(/Cross-Site Request Forgery/);
      expect(res.body).not.toContain(admin.email);
    });

    it.each([
      ['apollo-require-preflight', 'true'],
      ['x-apollo-operation-name', 'Me'],
      ['content-type', 'application/json'],
    ])('answers the same GET with %s, which needs a CORS preflight', async (header, value) => {
      const res = await ctx.inject({
        method: 'GET',
        url: `/graphql?query=${encodeURIComponent('query Me { me { email } }')}`,
        headers: { authorization: admin.basic, [header]: value },
      });
      expect(expectData(res).me.email).toBe(admin.email);
    });

    it('never runs a mutation over GET', async () => {
      const res = await ctx.inject({
        method: 'GET',
        url: `/graphql?query=${encodeURIComponent(createClient)}`,
        headers: { authorization: admin.basic, 'apollo-require-preflight': 'true' },
      });
      expect(res.statusCode).toBe(405);
      expect(res.json().errors[0].message).toMatch(/GET.*mutation|mutation.*GET/i);
      expect(await ctx.db.prisma.oAuthClient.count({ where: { name: 'csrf' } })).toBe(0);
    });

    // The content types a browser may send cross-site without a preflight. The
    // server parses JSON bodies only, so such a body never reaches Apollo: 415.
    it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
      'refuses a simple POST (%s) and runs nothing',
      async (type) => {
        const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': type, authorization: admin.basic }, payload: JSON.stringify({ query: createClient }) });
        expect(res.statusCode).toBe(415);
        expect(res.json()).toEqual({ error: 'UnsupportedMediaType', description: expect.any(String) });
        expect(await ctx.db.prisma.oAuthClient.count({ where: { name: 'csrf' } })).toBe(0);
      },
    );

    it('refuses a POST without any content type', async () => {
      const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { authorization: admin.basic }, payload: JSON.stringify({ query: createClient }) });
      expect(res.statusCode).toBe(415);
      expect(await ctx.db.prisma.oAuthClient.count({ where: { name: 'csrf' } })).toBe(0);
    });
  });

  it('shows field suggestions while introspection is on (the schema is public then)', async () => {
    const { message } = rejection(await asAdmin('{ me { emial } }'));
    expect(message).toContain('Did you mean "email"?');
  });

  it('leaves the REST routes working: their fixed operations are within every limit', async () => {
    const rules = [...specifiedRules, ...graphqlLimits().validationRules];
    for (const route of restRoutes) {
      expect({ route: `${route.method} ${route.paths[0]}`, errors: validate(buildGraphQLSchema(), route.document, rules).map((e) => e.message) }).toEqual({
        route: `${route.method} ${route.paths[0]}`,
        errors: [],
      });
    }
    const res = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens.json?per_page=100', headers: { authorization: admin.basic } });
    expect(res.statusCode).toBe(200);
    expect(res.json().tokens).toHaveLength(3);
  });
});

describe('GraphQL with introspection off (GRAPHQL_INTROSPECTION=false)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  const asAdmin = (query: string) => ctx.graphql(query, {}, { authorization: admin.basic });

  beforeAll(async () => {
    ctx = await createTestApp({ graphqlIntrospection: false });
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  it.each([
    ['a mistyped field', '{ me { emial } }', 'emial'],
    ['a mistyped root field', '{ oauthClientz { id } }', 'oauthClientz'],
    ['a mistyped argument', '{ oauthTokens(frist: 5) { totalCount } }', 'frist'],
    ['a mistyped enum value', '{ callbackRequests(status: QUEUE) { totalCount } }', 'QUEUE'],
  ])('answers %s without suggesting what exists', async (_name, query) => {
    const { message, code } = rejection(await asAdmin(query));
    expect(code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(message).not.toMatch(/did you mean/i);
    // no name of the schema beyond what the client itself sent
    for (const leaked of ['email', 'oauthTokens', 'first', 'QUEUED']) {
      if (!query.includes(leaked)) expect(message).not.toContain(leaked);
    }
  });

  it.each([
    ['__schema', '{ __schema { types { name } } }'],
    ['__type', '{ __type(name: "OAuthClient") { fields { name } } }'],
  ])('refuses an introspection query (%s)', async (_name, query) => {
    const res = await asAdmin(query);
    const { message, code } = rejection(res);
    expect(code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(message).toMatch(/introspection is not allowed/i);
    expect(res.body).not.toContain('clientIdentifier');
  });

  it('still answers ordinary queries', async () => {
    expect(expectData(await asAdmin(`{ me { id email } ${CLIENTS_WITH_TOKENS} }`)).me.email).toBe(admin.email);
  });

  it('serves no landing page', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
    // what Apollo answers a GET without a query when there is no landing page: a 400 in JSON, not a page
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json().errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_REQUEST' }) })]);
    expect(res.body).not.toMatch(/<html|<!doctype/i);
  });
});
