import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// Operations run on a compiled executor (graphql-jit, src/graphql/executor.ts).
// Where graphql-jit differs from graphql-js, the executor makes it answer as
// graphql-js does; each difference found has its case here.

// Each case runs on both executors: GRAPHQL_EXECUTOR=interpreter (graphql-js's
// execute, the fallback and the benchmark's baseline) must answer the same.
describe.each(['compiled', 'interpreter'] as const)('the %s executor answers as graphql-js would', (executor) => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp({ graphqlExecutor: executor });
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    await insertToken(ctx, admin);
    await insertToken(ctx, agent);
  });
  afterAll(() => ctx.close());

  const gql = (query: string, variables: Record<string, unknown> = {}, operationName?: string) =>
    ctx.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: admin.basic }, payload: { query, variables, operationName } });

  it("applies a variable's default value when the variable is left out", async () => {
    const q = 'query($all: Boolean! = true) { oauthTokens(all: $all) { totalCount } }';
    const res = await gql(q);
    expect(res.json()).toEqual({ data: { oauthTokens: { totalCount: 2 } } });
    expect((await gql(q, { all: false })).json()).toEqual({ data: { oauthTokens: { totalCount: 1 } } });
  });

  it('reports a variable of the wrong type as BAD_USER_INPUT (400), not as an internal error', async () => {
    const res = await gql('query($first: Int) { oauthTokens(first: $first) { totalCount } }', { first: 'ten' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('refuses an operation name the document does not have', async () => {
    const res = await gql('query A { me { id } }', {}, 'B');
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].message).toMatch(/Unknown operation named "B"/);
  });

  it('keeps domain errors as they are (code, details) through the compiled query', async () => {
    const res = await gql('mutation { createGroup(input: { name: "" }) { id } }');
    expect(res.json().errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', details: { name: [{ error: 'BlankValue', description: 'Name: cannot be blank' }] } });
  });

  it('signs the cursors a client asks for, and only those are needed to page on', async () => {
    const first = (await gql('{ oauthTokens(all: true, first: 1) { edges { cursor node { id } } pageInfo { startCursor endCursor hasNextPage } } }')).json();
    const { edges, pageInfo } = first.data.oauthTokens;
    expect(edges).toHaveLength(1);
    expect(edges[0].cursor).toBe(ctx.app.services.cursors.encode(BigInt(edges[0].node.id)));
    expect(pageInfo).toEqual({ startCursor: edges[0].cursor, endCursor: edges[0].cursor, hasNextPage: true });
    const next = (await gql('query($after: String) { oauthTokens(all: true, first: 1, after: $after) { edges { node { id } } pageInfo { hasNextPage } } }', { after: pageInfo.endCursor })).json();
    expect(next.data.oauthTokens.edges).toHaveLength(1);
    expect(BigInt(next.data.oauthTokens.edges[0].node.id)).toBeGreaterThan(BigInt(edges[0].node.id));
    expect(next.data.oauthTokens.pageInfo.hasNextPage).toBe(false);
  });

  it('a REST update that leaves fields out keeps them (no field becomes null)', async () => {
    const created = await ctx.inject({ method: 'POST', url: '/api/v2/groups', headers: { 'content-type': 'application/json', authorization: admin.basic }, payload: { group: { name: 'Keep', description: 'kept' } } });
    const id = created.json().group.id;
    const res = await ctx.inject({ method: 'PUT', url: `/api/v2/groups/${id}`, headers: { 'content-type': 'application/json', authorization: admin.basic }, payload: { group: { name: 'Renamed' } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().group).toMatchObject({ name: 'Renamed', description: 'kept' });
  });
});

describe('the schema leaves plain fields to the executor', () => {
  it('declares every object type with simpleResolvers, so a field without a resolver of its own is a property read, not a type-graphql resolver call', async () => {
    const { getMetadataStorage } = await import('type-graphql');
    const { buildGraphQLSchema } = await import('../src/graphql/schema');
    const schema = buildGraphQLSchema();
    const objectTypes = getMetadataStorage().objectTypes.map((t) => ({ name: t.name, simpleResolvers: t.simpleResolvers }));
    expect(objectTypes.length).toBeGreaterThan(15);
    expect(objectTypes.filter((t) => t.simpleResolvers !== true)).toEqual([]);
    // e.g. a token's id and an edge's node: no resolver; its client: a resolver (DataLoader, policy)
    const token = schema.getType('OAuthToken') as import('graphql').GraphQLObjectType;
    const edge = schema.getType('OAuthTokenEdge') as import('graphql').GraphQLObjectType;
    expect([token.getFields().id.resolve, edge.getFields().node.resolve, typeof token.getFields().client.resolve]).toEqual([undefined, undefined, 'function']);
  });
});
