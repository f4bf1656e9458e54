import { getIntrospectionQuery } from 'graphql';
import { createTestApp, type TestContext } from './helpers/test-app';

// While introspection is on (docs/api.md, "GraphQL"), the explorers (Apollo Sandbox,
// GraphiQL at /graphiql) load the schema with graphql-js's introspection query, sent
// without credentials (GraphiQL leaves out an unfilled Authorization template). Its lists
// are the schema's, not priced as pages (test/graphql-limits.test.ts); what bounds its
// nesting is graphql-js's MaxIntrospectionDepthRule, run by Apollo.

describe('GraphQL introspection within the limits', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(() => ctx.close());

  it.each([
    ['as GraphiQL sends it', getIntrospectionQuery()],
    ['with descriptions of the schema and deprecated arguments', getIntrospectionQuery({ schemaDescription: true, inputValueDeprecation: true })],
    ['without subscriptionType (GraphiQL\'s second try)', getIntrospectionQuery().replace('subscriptionType { name }', '')],
  ])('answers the introspection query %s, without credentials', async (_name, query) => {
    const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: { query, operationName: 'IntrospectionQuery' } });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { data: { __schema: { queryType: { name: string }; types: { name: string; fields: { name: string; description: string | null }[] | null }[] } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data.__schema.queryType.name).toBe('Query');
    const me = body.data.__schema.types.find((t) => t.name === 'Query')?.fields?.find((f) => f.name === 'me');
    expect(me?.description).toMatch(/^The authenticated user \(or the impersonated end user\)\. Who: any user\./);
  });

  it('refuses introspection nested deeper than graphql-js allows, with 400', async () => {
    const res = await ctx.graphql('{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }');
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ message: 'Maximum introspection depth exceeded', extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]);
  });
});
