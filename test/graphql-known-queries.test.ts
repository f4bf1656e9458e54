import { kdfRuns } from '../src/domain/auth/passwords';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// The fast path of POST /graphql (src/http/plugins/graphql.ts, knownQueryAnswer): a
// query text Apollo has accepted once is answered again without Apollo's per-request
// pipeline. Its promise: the same answer, byte for byte, head included, as Apollo's;
// anything it cannot answer exactly (errors, refusals, other media types, mutations)
// is Apollo's. Each case sends the same request several times: the first is always
// Apollo's (that is how a text becomes known), the later ones the fast path's when
// it can.

interface Answer {
  status: number;
  body: string;
  head: Record<string, unknown>;
}

describe('known queries (the GraphQL fast path)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;
  let adminBearer: string;
  let agentBearer: string;

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    adminBearer = `Bearer ${(await insertToken(ctx, admin)).token}`;
    await insertToken(ctx, admin);
    agentBearer = `Bearer ${(await insertToken(ctx, agent)).token}`;
  });
  afterAll(() => ctx.close());

  const stats = () => ({ ...ctx.app.fastify.graphqlKnownQueries });

  async function post(payload: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await ctx.inject({
      method: 'POST', url: '/graphql',
      headers: { 'content-type': 'application/json', authorization: adminBearer, ...headers },
      payload: JSON.stringify(payload),
    });
    // the head a client sees, but for what differs per request by design
    const { date: _date, 'x-request-id': _id, connection: _connection, 'keep-alive': _keepAlive, ...head } = res.headers;
    return { status: res.statusCode, body: res.body, head };
  }

  /** Sends the request `times` times; expects every answer to equal the first (Apollo's); returns it and what the fast path did. */
  async function repeated(payload: unknown, headers: Record<string, string> = {}, times = 3) {
    const before = stats();
    const answers: Answer[] = [];
    for (let i = 0; i < times; i++) answers.push(await post(payload, headers));
    for (const answer of answers.slice(1)) {
      expect(answer).toEqual(answers[0]);
      // the same header lines in the same order
      expect(Object.keys(answer.head)).toEqual(Object.keys(answers[0].head));
    }
    const after = stats();
    return { answer: answers[0], answered: after.answered - before.answered, handedOver: after.handedOver - before.handedOver };
  }

  it('answers a known query as Apollo did: status, every header, the same bytes', async () => {
    const { answer, answered } = await repeated({ query: '{ currentOAuthToken { id scopes user { email } } }' });
    expect(answer.status).toBe(200);
    expect(answer.head['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.head['cache-control']).toBe('no-store');
    expect(JSON.parse(answer.body).data.currentOAuthToken.user.email).toBe(admin.email);
    expect(answered).toBe(2);
  });

  it('runs a known query with new variables, and answers for those variables', async () => {
    const query = 'query Page($first: Int, $all: Boolean) { oauthTokens(first: $first, all: $all) { totalCount edges { node { id client { name } } } } }';
    const one = await repeated({ query, variables: { first: 1, all: true }, operationName: 'Page' });
    const before = stats();
    const two = await post({ query, variables: { first: 2, all: true }, operationName: 'Page' });
    expect(stats().answered - before.answered).toBe(1);
    expect(JSON.parse(one.answer.body).data.oauthTokens.edges).toHaveLength(1);
    expect(JSON.parse(two.body).data.oauthTokens).toMatchObject({ totalCount: 3 });
    expect(JSON.parse(two.body).data.oauthTokens.edges).toHaveLength(2);
    // variables left out: the operation's own defaults apply (none here: the caller's own tokens, 20 per page)
    const mine = await post({ query, operationName: 'Page' });
    expect(JSON.parse(mine.body).data.oauthTokens.totalCount).toBe(2);
  });

  it('keeps the operations of one document apart by operation name', async () => {
    const query = 'query A { me { email } } query B { currentOAuthToken { scopes } }';
    const a = await repeated({ query, operationName: 'A' });
    const b = await repeated({ query, operationName: 'B' });
    expect(JSON.parse(a.answer.body)).toEqual({ data: { me: { email: admin.email } } });
    expect(JSON.parse(b.answer.body)).toEqual({ data: { currentOAuthToken: { scopes: ['read', 'write'] } } });
    expect(a.answered + b.answered).toBe(4);
  });

  it('hands an answer with errors to Apollo, which answers it exactly as the first time', async () => {
    // an agent: its own token's scalars, FORBIDDEN at client (admins only)
    const { answer, answered, handedOver } = await repeated(
      { query: '{ currentOAuthToken { id client { name } } }' },
      { authorization: agentBearer },
    );
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body);
    expect(body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(body.data.currentOAuthToken.client).toBeNull();
    expect(answered).toBe(0);
    expect(handedOver).toBe(2);
  });

  it('hands over variables of the wrong type (400 BAD_USER_INPUT) and a cost over the budget (400 BAD_REQUEST)', async () => {
    const query = 'query($n: Int) { oauthTokens(first: $n) { edges { node { client { tokens { client { tokens { id } } } } } } } }';
    const small = await repeated({ query, variables: { n: 1 } });
    expect(small.answer.status).toBe(200);
    expect(small.answered).toBe(2);
    const wrongType = await repeated({ query, variables: { n: 'ten' } });
    expect(wrongType.answer.status).toBe(400);
    expect(JSON.parse(wrongType.answer.body).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const tooCostly = await repeated({ query, variables: { n: 100 } });
    expect(tooCostly.answer.status).toBe(400);
    expect(JSON.parse(tooCostly.answer.body).errors[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST' }, message: expect.stringMatching(/cost limit/) });
    expect(wrongType.answered + tooCostly.answered).toBe(0);
    // the text is known from the first request: every one of these is looked at and handed over
    expect(wrongType.handedOver + tooCostly.handedOver).toBe(6);
  });

  it('hands over a failed authentication without authenticating twice: one KDF per wrong password, 401 as Apollo answers it', async () => {
    const query = '{ me { id } }';
    await repeated({ query });
    const wrong = { authorization: `Basic ${Buffer.from(`${admin.email}:not-the-password`).toString('base64')}` };
    const kdfs = kdfRuns();
    const { answer, handedOver } = await repeated({ query }, wrong, 2);
    expect(answer.status).toBe(401);
    expect(answer.head['www-authenticate']).toBe('Basic realm="api"');
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(handedOver).toBe(2);
    expect(kdfRuns() - kdfs).toBe(2);
    const badBearer = await repeated({ query }, { authorization: 'Bearer nope' }, 2);
    expect(badBearer.answer.status).toBe(401);
    expect(badBearer.answer.head['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('leaves to Apollo what it would answer otherwise: other media types, extensions, mutations', async () => {
    const query = '{ currentOAuthToken { id } }';
    await repeated({ query });
    const graphqlResponse = await repeated({ query }, { accept: 'application/graphql-response+json' });
    expect(graphqlResponse.answer.head['content-type']).toBe('application/graphql-response+json; charset=utf-8');
    const withExtensions = await repeated({ query, extensions: {} });
    expect(withExtensions.answer.status).toBe(200);
    const notJson = await repeated({ query }, { accept: 'text/html' });
    expect(notJson.answer.status).toBe(406);
    const before = stats();
    const names = ['fast-path-a', 'fast-path-b', 'fast-path-c'];
    for (const name of names) {
      const res = await post({ query: 'mutation($name: String!) { createGroup(input: { name: $name }) { name } }', variables: { name } });
      expect(JSON.parse(res.body)).toEqual({ data: { createGroup: { name } } });
    }
    expect(stats()).toEqual(before);
    expect(graphqlResponse.answered + withExtensions.answered + notJson.answered).toBe(0);
  });

  it('is off with the interpreter (GRAPHQL_EXECUTOR=interpreter): Apollo answers everything', async () => {
    const interpreted = await createTestApp({ graphqlExecutor: 'interpreter' });
    try {
      const account = await interpreted.createAccount();
      const user = await interpreted.createUser(account, 'admin');
      for (let i = 0; i < 3; i++) {
        const res = await interpreted.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: user.basic }, payload: { query: '{ me { email } }' } });
        expect(res.json()).toEqual({ data: { me: { email: user.email } } });
      }
      expect(interpreted.app.fastify.graphqlKnownQueries).toEqual({ answered: 0, handedOver: 0 });
    } finally {
      await interpreted.close();
    }
  });
});
