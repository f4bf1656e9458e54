import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';
import { insertTokenForClient } from './helpers/oauth-client-drivers';

// Zendesk's List Tokens: "returns the properties of the tokens for the current user.
// Admins can view OAuth token properties for all users using the `all` parameter."
// Listing stays admin-only (docs/api.md, "OAuth tokens"); an admin's list is their own
// tokens, and `all=true` (GraphQL `all: true`) lists every token of the account.

describe('GET /api/v2/oauth/tokens?all= and oauthTokens(all:)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let colleague: TestUser;
  let agent: TestUser;
  let stranger: TestUser;
  let clientA: bigint;
  let clientB: bigint;
  /** token ids by owner, id ascending */
  const mine: number[] = [];
  const colleagues: number[] = [];
  const agents: number[] = [];
  const strangers: number[] = [];
  /** token id → client id */
  let clientOf: Map<number, number>;
  const isOnClient = (id: number, client: bigint) => clientOf.get(id) === Number(client);

  const ids = (body: { tokens: { id: number }[] }) => body.tokens.map((t) => t.id);
  const get = async (url: string, who: TestUser = admin) => {
    const res = await ctx.inject({ method: 'GET', url, headers: { authorization: who.basic } });
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  const LIST = `query($all: Boolean, $clientId: ID, $first: Int, $after: String, $page: Int, $perPage: Int) {
    oauthTokens(${'all: $all, '}clientId: $clientId, first: $first, after: $after, page: $page, perPage: $perPage) {
      totalCount edges { node { id userId } } pageInfo { hasNextPage endCursor } } }`;
  const gql = async (variables: Record<string, unknown>) => {
    // `all` omitted, false or true: a variable left out takes the argument's default (false)
    const query = 'all' in variables ? LIST : LIST.replace('$all: Boolean, ', '').replace('all: $all, ', '');
    const res = await ctx.graphql(query, variables, { authorization: admin.basic });
    const body = res.json();
    expect(body.errors).toBeUndefined();
    return body.data.oauthTokens as { totalCount: number; edges: { node: { id: string; userId: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    colleague = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    stranger = await ctx.createUser(await ctx.createAccount(), 'admin');
    const first = await insertToken(ctx, admin);
    clientA = first.clientId;
    mine.push(Number(first.id));
    const second = await insertToken(ctx, colleague);
    clientB = second.clientId;
    colleagues.push(Number(second.id));
    // interleaved owners, over both clients
    for (let i = 0; i < 6; i++) {
      const client = i % 2 === 0 ? clientA : clientB;
      mine.push(Number((await insertTokenForClient(ctx, admin, client)).id));
      colleagues.push(Number((await insertTokenForClient(ctx, colleague, client)).id));
      agents.push(Number((await insertTokenForClient(ctx, agent, client)).id));
    }
    strangers.push(Number((await insertToken(ctx, stranger)).id));
    const rows = await ctx.db.prisma.oAuthToken.findMany({ select: { id: true, clientId: true } });
    clientOf = new Map(rows.map((r) => [Number(r.id), Number(r.clientId)]));
  });
  afterAll(() => ctx.close());

  const everyone = () => [...mine, ...colleagues, ...agents].sort((a, b) => a - b);

  it('lists only the admin\'s own tokens by default and with all=false', async () => {
    expect(ids(await get('/api/v2/oauth/tokens'))).toEqual(mine);
    expect(ids(await get('/api/v2/oauth/tokens.json?all=false'))).toEqual(mine);
    expect((await get('/api/v2/oauth/tokens?all=false')).count).toBe(mine.length);
    expect(ids(await get('/api/v2/oauth/tokens', colleague))).toEqual(colleagues);
  });

  it('lists every token of the account with all=true, never another account\'s', async () => {
    const all = await get('/api/v2/oauth/tokens?all=true');
    expect(ids(all)).toEqual(everyone());
    expect(all.count).toBe(everyone().length);
    expect(ids(all)).not.toEqual(expect.arrayContaining(strangers));
    const theirs = await get('/api/v2/oauth/tokens?all=true', stranger);
    expect(ids(theirs)).toEqual(strangers);
  });

  it('combines all with the client_id filter', async () => {
    const onA = (list: number[]) => list.filter((id) => isOnClient(id, clientA));
    expect(ids(await get(`/api/v2/oauth/tokens?client_id=${clientA}`))).toEqual(onA(mine));
    const both = await get(`/api/v2/oauth/tokens?client_id=${clientA}&all=true`);
    expect(ids(both)).toEqual(onA(everyone()));
    expect(both.count).toBe(onA(everyone()).length);
    expect(ids(await get(`/api/v2/oauth/tokens?client_id=${clientB}&all=false`))).toEqual(mine.filter((id) => isOnClient(id, clientB)));
    expect(ids(await get(`/api/v2/oauth/tokens?client_id=${clientA}&all=true`, stranger))).toEqual([]);
  });

  it('pages by offset and by cursor within the chosen set, counts and links keeping all', async () => {
    // offset: count and next_page follow `all`
    const page1 = await get('/api/v2/oauth/tokens?all=true&per_page=5');
    expect(page1.count).toBe(everyone().length);
    expect(new URL(page1.next_page).searchParams.get('all')).toBe('true');
    const page2 = await get(new URL(page1.next_page).pathname + new URL(page1.next_page).search);
    expect([...ids(page1), ...ids(page2)]).toEqual(everyone().slice(0, 10));
    const own = await get('/api/v2/oauth/tokens?per_page=5');
    expect(own.count).toBe(mine.length);
    expect(ids(own)).toEqual(mine.slice(0, 5));
    // cursor: walk all of it
    const seen: number[] = [];
    let url: string | null = '/api/v2/oauth/tokens.json?all=true&page[size]=4';
    while (url) {
      const body = await get(url);
      seen.push(...ids(body));
      url = body.links.next && new URL(body.links.next).pathname + new URL(body.links.next).search;
    }
    expect(seen).toEqual(everyone());
  });

  it('refuses all values other than true and false with 400', async () => {
    for (const value of ['yes', '1', 'TRUE', 'all']) {
      const res = await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens?all=${value}`, headers: { authorization: admin.basic } });
      expect([value, res.statusCode, res.json().error]).toEqual([value, 400, 'InvalidRequest']);
    }
  });

  it('stays admin-only: an agent gets 403 with or without all', async () => {
    for (const url of ['/api/v2/oauth/tokens', '/api/v2/oauth/tokens?all=true']) {
      expect((await ctx.inject({ method: 'GET', url, headers: { authorization: agent.basic } })).statusCode).toBe(403);
    }
  });

  it('GraphQL: oauthTokens defaults to the viewer\'s own; all: true lists the account, with totalCount and pages to match', async () => {
    const nodes = (c: { edges: { node: { id: string } }[] }) => c.edges.map((e) => Number(e.node.id));
    const own = await gql({});
    expect(nodes(own)).toEqual(mine);
    expect(own.totalCount).toBe(mine.length);
    expect(own.edges.every((e) => e.node.userId === String(admin.id))).toBe(true);
    expect(nodes(await gql({ all: false }))).toEqual(mine);
    const all = await gql({ all: true });
    expect(nodes(all)).toEqual(everyone());
    expect(all.totalCount).toBe(everyone().length);
    const byClient = await gql({ all: true, clientId: String(clientA) });
    expect(nodes(byClient)).toEqual(everyone().filter((id) => isOnClient(id, clientA)));
    expect(byClient.totalCount).toBe(nodes(byClient).length);
    // offset and cursor pages
    const offset = await gql({ all: true, page: 2, perPage: 5 });
    expect(nodes(offset)).toEqual(everyone().slice(5, 10));
    expect(offset.totalCount).toBe(everyone().length);
    const first = await gql({ all: true, first: 3 });
    const next = await gql({ all: true, first: 3, after: first.pageInfo.endCursor });
    expect([...nodes(first), ...nodes(next)]).toEqual(everyone().slice(0, 6));
    const ownFirst = await gql({ first: 3 });
    expect(nodes(ownFirst)).toEqual(mine.slice(0, 3));
    expect(ownFirst.totalCount).toBe(mine.length);
  });

  it('GraphQL: OAuthClient.tokens still shows every token of the client to an admin', async () => {
    const res = await ctx.graphql(`{ oauthClient(id: "${clientA}") { tokens { id } } }`, {}, { authorization: admin.basic });
    expect(res.json().data.oauthClient.tokens.map((t: { id: string }) => Number(t.id))).toEqual(everyone().filter((id) => isOnClient(id, clientA)));
  });
});
