import fc from 'fast-check';
import { execute, parse } from 'graphql';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { GRAPHQL_LIMITS, operationCost, type ObjectCount } from '../src/graphql/limits';
import { Loaders } from '../src/graphql/loaders';
import type { GraphQLContext } from '../src/graphql/context';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// The cost estimate must bound what an operation really returns. It once sized a
// connection by `first ?? last` while the resolver paged by `perPage` (offset
// mode) or `last` (when `before` is given): `oauthTokens(first: 1, perPage: 100)`
// passed as cheap and returned a million ids. Both now take the page size from
// pageRequest() (domain/pagination.ts); this property checks the bound over every
// combination of page arguments and aliases, on a database where each client
// has more tokens than a page holds.

const TOKENS_PER_CLIENT = 130;
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

const NODE = 'id client { id tokens { id user { id } } } user { id }';
const connection = (alias: string) =>
  `${alias}: oauthTokens(clientId: $clientId, first: $first, after: $after, last: $last, before: $before, page: $page, perPage: $perPage) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${NODE} } } }`;
const document = (aliases: number) =>
  `query($clientId: ID, $first: Int, $after: String, $last: Int, $before: String, $page: Int, $perPage: Int) {
    ${Array.from({ length: aliases }, (_, i) => connection(`a${i}`)).join('\n')} }`;

/** Objects in an answer: every JSON object, at any depth. */
function countObjects(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countObjects(v), 0);
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Object.values(value).reduce((n: number, v) => n + countObjects(v), 0);
}

describe('GraphQL cost estimate ≥ objects returned (issue: cost limit bypass)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let bearer: string;
  let clientId: bigint;
  let cursors: string[];
  const schema = buildGraphQLSchema();

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    const first = await insertToken(ctx, admin, { scopes: ['read'] });
    bearer = `Bearer ${first.token}`;
    clientId = first.clientId;
    // more tokens per client than a page holds
    await ctx.db.sql(
      `INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes)
       SELECT $1, $2, $3, 'bulk-' || g, 'bulkbulkbu', '{read}' FROM generate_series(1, $4::int) g`,
      [String(account), String(clientId), String(admin.id), TOKENS_PER_CLIENT],
    );
    const ids = await ctx.db.sql<{ id: string }>('SELECT id::text AS id FROM oauth_tokens WHERE client_id = $1 ORDER BY id', [String(clientId)]);
    cursors = [ids[0], ids[50], ids[ids.length - 1]].map((r) => ctx.app.services.cursors.encode(BigInt(r.id)));
  });
  afterAll(() => ctx.close());

  async function run(source: string, variables: Record<string, unknown>, objects?: ObjectCount) {
    const viewer = await ctx.app.services.authenticator.authenticate({ authorization: bearer });
    const contextValue: GraphQLContext = {
      viewer, services: ctx.app.services, baseUrl: 'http://localhost', loaders: new Loaders(ctx.app.services, viewer!, 'http://localhost'), objects,
    };
    return execute({ schema, document: parse(source), variableValues: variables, contextValue });
  }

  it('holds for every combination of first/last/after/before/page/perPage and aliases', async () => {
    const size = fc.option(fc.oneof(fc.integer({ min: -1, max: 3 }), fc.integer({ min: 98, max: 150 })), { nil: undefined });
    const cursor = () => fc.option(fc.constantFrom(...cursors), { nil: undefined });
    const args = fc.record({
      first: size, last: size, after: cursor(), before: cursor(),
      page: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }), perPage: size,
      clientId: fc.option(fc.constant(String(clientId)), { nil: undefined }),
    });
    let largest = { objects: 0, estimate: 0 };
    await fc.assert(
      fc.asyncProperty(args, fc.integer({ min: 1, max: 2 }), async (variables, aliases) => {
        const source = document(aliases);
        const estimate = operationCost(schema, parse(source), variables);
        const result = await run(source, variables);
        const objects = countObjects(result.data);
        if (objects > largest.objects) largest = { objects, estimate };
        expect({ variables, aliases, estimate, objects, ok: estimate >= objects }).toMatchObject({ ok: true });
      }),
      { numRuns: RUNS },
    );
    // the property really met big answers (a full page, each token with its client's 100 tokens)
    expect(largest.objects).toBeGreaterThan(10_000);
  });

  it("refuses the probe's query, offset page size behind first: 1, before it runs (HTTP 400)", async () => {
    const probe = `{ oauthTokens(clientId: "${clientId}", first: 1, perPage: 100) { edges { node { client { tokens { client { tokens { id } } } } } } } }`;
    for (const query of [probe, `{ ${Array.from({ length: 11 }, (_, i) => `a${i}: ${probe.slice(2, -2)}`).join(' ')} }`]) {
      const res = await ctx.graphql(query, {}, { authorization: bearer });
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body.data ?? null).toBeNull();
      expect(body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_REQUEST' } })]);
      expect(body.errors[0].message).toMatch(/^Query cost limit of 120000 exceeded, found \d+\.$/);
    }
    // last + before is sized by last, as the resolver pages it
    const backward = `{ oauthTokens(first: 1, last: 100, before: "${cursors[2]}") { edges { node { client { tokens { client { tokens { id } } } } } } } }`;
    expect((await ctx.graphql(backward, {}, { authorization: bearer })).statusCode).toBe(400);
  });

  it('stops an operation that resolves more objects than the budget while it runs, with the same error and no data', async () => {
    // as if the estimate had been wrong: the operation starts 50 objects short of the budget
    const objects: ObjectCount = { count: GRAPHQL_LIMITS.maxCost - 50, exceeded: false };
    const result = await run(document(1), { first: 100 }, objects);
    expect(objects.exceeded).toBe(true);
    expect(result.errors?.length).toBeGreaterThan(0);
    expect(result.errors![0].message).toBe(`Query cost limit of ${GRAPHQL_LIMITS.maxCost} exceeded while running; ask for fewer or smaller pages`);
    expect((result.errors![0].originalError as { code?: string }).code).toBe('BAD_REQUEST');
    // it stopped: no more than the budget plus the one list that crossed it (100 edges and their nodes) was resolved
    expect(objects.count).toBeLessThanOrEqual(GRAPHQL_LIMITS.maxCost + 200);
  });
});
