import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

describe('GET /api/v2/oauth/tokens pagination (docs/api.md, "Pagination")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let ids: number[];
  let otherClientIds: number[];
  const get = (url: string) => ctx.inject({ method: 'GET', url, headers: { authorization: admin.basic } });
  const path = (absolute: string) => new URL(absolute).pathname + new URL(absolute).search;

  beforeAll(async () => {
    ctx = await createTestApp({ publicUrl: 'https://help.example.com' });
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
    const first = await insertToken(ctx, admin);
    const second = await insertToken(ctx, admin);
    // 250 tokens in all: 199 on the first client, 51 on the second
    const rows = Array.from({ length: 248 }, (_, i) => ({
      accountId: admin.accountId, clientId: i < 198 ? first.clientId : second.clientId, userId: admin.id,
      tokenHash: `hash-${i}-${Math.random()}`, tokenPrefix: 'prefix0000', scopes: ['read'],
    }));
    await ctx.db.prisma.oAuthToken.createMany({ data: rows });
    const all = await ctx.db.prisma.oAuthToken.findMany({ orderBy: { id: 'asc' }, select: { id: true, clientId: true } });
    ids = all.map((t) => Number(t.id));
    otherClientIds = all.filter((t) => t.clientId === second.clientId).map((t) => Number(t.id));
    expect(ids).toHaveLength(250);
  });
  afterAll(() => ctx.close());

  it('walks forward and backward by cursor, seeing every token once, with has_more and links right at both ends', async () => {
    const seen: number[] = [];
    let res = await get('/api/v2/oauth/tokens.json?page[size]=100&sort=id');
    expect(res.json().links.prev).toBeNull();
    const pages = [];
    for (;;) {
      const body = res.json();
      pages.push(body);
      seen.push(...body.tokens.map((t: { id: number }) => t.id));
      if (!body.meta.has_more) break;
      expect(body.links.next).toMatch(/^https:\/\/help\.example\.com\/api\/v2\/oauth\/tokens\.json\?/);
      expect(new URL(body.links.next).searchParams.get('sort')).toBe('id'); // other params kept
      res = await get(path(body.links.next));
    }
    expect(seen).toEqual(ids);
    expect(pages.map((p) => p.tokens.length)).toEqual([100, 100, 50]);
    const last = pages[2];
    expect(last.links.next).toBeNull();
    expect(last.links.prev).not.toBeNull();
    expect(last.meta.after_cursor).toEqual(expect.any(String));

    // and back from the last page
    const back: number[] = [...last.tokens.map((t: { id: number }) => t.id)];
    let prev = last.links.prev;
    while (prev) {
      const body = (await get(path(prev))).json();
      back.unshift(...body.tokens.map((t: { id: number }) => t.id));
      prev = body.links.prev;
      if (!prev) expect(body.meta.has_more).toBe(false);
    }
    expect(back).toEqual(ids);
  });

  it('walks by offset with next_page, previous_page and count', async () => {
    const seen: number[] = [];
    let url: string | null = '/api/v2/oauth/tokens?per_page=100';
    let n = 0;
    while (url) {
      const body: { tokens: { id: number }[]; next_page: string | null; previous_page: string | null; count: number } = (await get(url)).json();
      expect(body.count).toBe(250);
      if (n++ === 0) expect(body.previous_page).toBeNull();
      else expect(body.previous_page).toMatch(/page=\d/);
      seen.push(...body.tokens.map((t) => t.id));
      url = body.next_page && path(body.next_page);
    }
    expect(seen).toEqual(ids);
    expect(n).toBe(3);
  });

  it('clamps page[size] and per_page to 100', async () => {
    expect((await get('/api/v2/oauth/tokens?page[size]=1000')).json().tokens).toHaveLength(100);
    expect((await get('/api/v2/oauth/tokens?per_page=1000')).json().tokens).toHaveLength(100);
    expect((await get('/api/v2/oauth/tokens')).json().tokens).toHaveLength(100);
  });

  it.each([
    ['a tampered cursor', '/api/v2/oauth/tokens?page[after]=MQ.AAAAAAAAAAAAAAAA'],
    ['a garbage cursor', '/api/v2/oauth/tokens?page[before]=%00%01'],
    ['page[size]=0', '/api/v2/oauth/tokens?page[size]=0'],
    ['page[size]=abc', '/api/v2/oauth/tokens?page[size]=abc'],
    ['page=0', '/api/v2/oauth/tokens?page=0'],
    ['per_page=-1', '/api/v2/oauth/tokens?per_page=-1'],
    ['client_id=abc', '/api/v2/oauth/tokens?client_id=abc'],
    ['beyond 10,000 records by offset', '/api/v2/oauth/tokens?page=101&per_page=100'],
  ])('answers 400 for %s', async (_name, url) => {
    const res = await get(url);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('InvalidRequest');
  });

  it('tells the caller to use cursor pagination past 10,000 records', async () => {
    expect((await get('/api/v2/oauth/tokens?page=100&per_page=100')).statusCode).toBe(200);
    expect((await get('/api/v2/oauth/tokens?page=10001&per_page=1')).json().description).toMatch(/cursor/);
  });

  it('filters by client_id in both modes', async () => {
    const clientId = (await ctx.db.prisma.oAuthToken.findUniqueOrThrow({ where: { id: BigInt(otherClientIds[0]) } })).clientId;
    const byCursor = (await get(`/api/v2/oauth/tokens?client_id=${clientId}&page[size]=100`)).json();
    expect(byCursor.tokens.map((t: { id: number }) => t.id)).toEqual(otherClientIds);
    const byOffset = (await get(`/api/v2/oauth/tokens?client_id=${clientId}`)).json();
    expect(byOffset.count).toBe(otherClientIds.length);
    expect(otherClientIds).toHaveLength(51); // 50 inserted + the one of insertToken
    expect((await get('/api/v2/oauth/tokens?client_id=987654')).json().tokens).toEqual([]);
  });

  it('pages the GraphQL connection forward and backward with totalCount', async () => {
    const q = `query($first: Int, $after: String, $last: Int, $before: String) {
      oauthTokens(first: $first, after: $after, last: $last, before: $before) {
        totalCount edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const conn = (await ctx.graphql(q, { first: 100, after }, { authorization: admin.basic })).json().data.oauthTokens;
      expect(conn.totalCount).toBe(250);
      seen.push(...conn.edges.map((e: { node: { id: string } }) => e.node.id));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toEqual(ids.map(String));
    const tail = (await ctx.graphql(q, { last: 10 }, { authorization: admin.basic })).json().data.oauthTokens;
    expect(tail.edges.map((e: { node: { id: string } }) => Number(e.node.id))).toEqual(ids.slice(-10));
    expect(tail.pageInfo.hasPreviousPage).toBe(true);
  });
});
