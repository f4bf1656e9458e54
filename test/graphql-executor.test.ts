import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// Operations run on a compiled executor (graphql-jit, src/graphql/executor.ts).
// Where graphql-jit differs from graphql-js, the executor makes it answer as
// graphql-js does; each difference found has its case here.

describe('the compiled executor answers as graphql-js would', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
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

  it('a REST update that leaves fields out keeps them (no field becomes null)', async () => {
    const created = await ctx.inject({ method: 'POST', url: '/api/v2/groups', headers: { 'content-type': 'application/json', authorization: admin.basic }, payload: { group: { name: 'Keep', description: 'kept' } } });
    const id = created.json().group.id;
    const res = await ctx.inject({ method: 'PUT', url: `/api/v2/groups/${id}`, headers: { 'content-type': 'application/json', authorization: admin.basic }, payload: { group: { name: 'Renamed' } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().group).toMatchObject({ name: 'Renamed', description: 'kept' });
  });
});
