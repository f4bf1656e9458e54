import { createTestApp, insertToken, TEST_HASH_KEY, type TestContext, type TestUser } from './helpers/test-app';
import { hmacHex, randomUrlSafe } from '../src/domain/crypto';

/**
 * OAuth tokens through the GraphQL API (docs/api.md, "Authentication", "Scopes and roles", "OAuth tokens", "GraphQL"): the operations,
 * who may run them, the Relay connection, scopes, and the number of SQL
 * statements a request costs (no N+1). The REST routes have their own files
 * (oauth-tokens.test.ts, oauth-tokens.pagination.test.ts).
 */

type Headers = Record<string, string>;
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });
const URL_SAFE_43 = /^[A-Za-z0-9_-]{43,}$/;

const TOKEN_FIELDS = 'id token clientId userId scopes createdAt expiresAt usedAt refreshToken url';
const CREATE = `mutation($input: CreateOAuthTokenInput!) { createOAuthToken(input: $input) { ${TOKEN_FIELDS} } }`;
const SHOW = `query($id: ID!) { oauthToken(id: $id) { ${TOKEN_FIELDS} client { id name } user { id email } } }`;
const CURRENT_FIELD = `currentOAuthToken { ${TOKEN_FIELDS} client { name } user { email } }`;
const CURRENT = `{ ${CURRENT_FIELD} }`;
const REVOKE = 'mutation($id: ID!) { revokeOAuthToken(id: $id) }';
const REVOKE_CURRENT = 'mutation { revokeCurrentOAuthToken }';
const LIST = `query($clientId: ID, $first: Int, $after: String, $last: Int, $before: String) {
  oauthTokens(all: true, clientId: $clientId, first: $first, after: $after, last: $last, before: $before) {
    totalCount
    edges { cursor node { id token } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  } }`;

interface Connection {
  totalCount: number;
  edges: { cursor: string; node: { id: string; token: string } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

describe('OAuth tokens over GraphQL (docs/api.md, "OAuth tokens", "GraphQL")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let otherAdmin: TestUser;
  let clientId: string;
  let otherClientId: string;

  const gql = async (query: string, variables: Record<string, unknown> = {}, headers: Headers = {}) => {
    const res = await ctx.graphql(query, variables, headers);
    const body = res.json();
    return { status: res.statusCode, headers: res.headers, body, data: body.data, code: body.errors?.[0]?.extensions?.code as string | undefined };
  };
  const tokenRow = async (id: string | bigint) =>
    (await ctx.db.sql<Record<string, unknown>>('SELECT * FROM oauth_tokens WHERE id = $1', [String(id)]))[0];
  const tokenCount = async () => Number((await ctx.db.sql<{ n: string }>('SELECT count(*) AS n FROM oauth_tokens'))[0].n);
  const createClient = async (who: TestUser, name: string) => {
    const res = await gql('mutation($input: OAuthClientInput!) { createOAuthClient(input: $input) { id } }',
      { input: { name, scopes: 'read write', redirectUris: ['https://app.example.com/cb'] } }, { authorization: who.basic });
    expect(res.code).toBeUndefined();
    return res.data.createOAuthClient.id as string;
  };

  beforeAll(async () => {
    ctx = await createTestApp({ publicUrl: 'https://help.example.com' });
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    otherAdmin = await ctx.createUser(await ctx.createAccount(), 'admin');
    clientId = await createClient(admin, 'dashboard');
    otherClientId = await createClient(otherAdmin, 'elsewhere');
  });
  afterAll(() => ctx.close());

  describe('createOAuthToken', () => {
    it('gives an admin the full token once; the database keeps only its hash and first 10 characters', async () => {
      const res = await gql(CREATE, { input: { clientId, scopes: ['read', 'write'] } }, { authorization: admin.basic });
      expect(res.body.errors).toBeUndefined();
      const created = res.data.createOAuthToken;
      expect(created).toMatchObject({ clientId, userId: String(admin.id), scopes: ['read', 'write'], expiresAt: null, usedAt: null, refreshToken: null });
      expect(created.token).toMatch(URL_SAFE_43);
      expect(created.url).toBe(`https://help.example.com/api/v2/oauth/tokens/${created.id}.json`);

      const row = await tokenRow(created.id);
      expect(row.token_hash).toBe(hmacHex(TEST_HASH_KEY, created.token));
      expect(row.token_prefix).toBe(created.token.slice(0, 10));
      expect(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(created.token);

      // Never again in full: show, list and current give the first 10 characters.
      const shown = await gql(SHOW, { id: created.id }, { authorization: admin.basic });
      expect(shown.data.oauthToken.token).toBe(created.token.slice(0, 10));
      const listed = await gql(LIST, { clientId }, { authorization: admin.basic });
      expect(listed.data.oauthTokens.edges.find((e: Connection['edges'][0]) => e.node.id === created.id).node.token).toBe(created.token.slice(0, 10));
      const current = await gql(CURRENT, {}, bearer(created.token));
      expect(current.data.currentOAuthToken).toMatchObject({ id: created.id, token: created.token.slice(0, 10) });
    });

    it.each([
      ['no clientId', { scopes: ['read'] }, { client_id: 'BlankValue' }],
      ['a clientId that is not a number', { clientId: 'abc', scopes: ['read'] }, { client_id: 'InvalidValue' }],
      ['no scopes', { clientId: 'CLIENT' }, { scopes: 'BlankValue' }],
      ['empty scopes', { clientId: 'CLIENT', scopes: [] }, { scopes: 'BlankValue' }],
      ['51 scopes', { clientId: 'CLIENT', scopes: Array.from({ length: 51 }, () => 'read') }, { scopes: 'TooLong' }],
      ['a scope of 101 characters', { clientId: 'CLIENT', scopes: ['read', 'x'.repeat(101)] }, { scopes: 'TooLong' }],
      ['neither field', {}, { client_id: 'BlankValue', scopes: 'BlankValue' }],
      ['a clientId of no client', { clientId: '999999', scopes: ['read'] }, { client_id: 'NotFound' }],
      ["another account's client", { clientId: 'OTHER', scopes: ['read'] }, { client_id: 'NotFound' }],
    ])('refuses %s with BAD_USER_INPUT and details, storing nothing', async (_name, input, expected) => {
      const resolved = JSON.parse(JSON.stringify(input).replace('"CLIENT"', JSON.stringify(clientId)).replace('"OTHER"', JSON.stringify(otherClientId)));
      const before = await tokenCount();
      const res = await gql(CREATE, { input: resolved }, { authorization: admin.basic });
      expect(res.data).toBeNull();
      expect(res.code).toBe('BAD_USER_INPUT');
      const details = res.body.errors[0].extensions.details;
      expect(Object.keys(details).sort()).toEqual(Object.keys(expected).sort());
      for (const [field, code] of Object.entries(expected)) {
        expect(details[field]).toEqual([{ error: code, description: expect.any(String) }]);
      }
      expect(await tokenCount()).toBe(before);
    });

    it('is FORBIDDEN to agents and end users, by Basic auth or by a write token', async () => {
      const before = await tokenCount();
      for (const who of [agent, endUser]) {
        expect((await gql(CREATE, { input: { clientId, scopes: ['read'] } }, { authorization: who.basic })).code).toBe('FORBIDDEN');
        const { token } = await insertToken(ctx, who, { scopes: ['read', 'write'] });
        expect((await gql(CREATE, { input: { clientId, scopes: ['read'] } }, bearer(token))).code).toBe('FORBIDDEN');
      }
      expect(await tokenCount()).toBe(before + 2); // the two insertToken rows only
      expect((await gql(CREATE, { input: { clientId, scopes: ['read'] } })).code).toBe('UNAUTHENTICATED');
    });
  });

  describe('oauthToken(id)', () => {
    it("shows an admin any token of the account with its client and user; null for unknown ids and other accounts' tokens", async () => {
      const agents = await insertToken(ctx, agent, { scopes: ['read'] });
      const res = await gql(SHOW, { id: String(agents.id) }, { authorization: admin.basic });
      expect(res.body.errors).toBeUndefined();
      expect(res.data.oauthToken).toMatchObject({
        id: String(agents.id), token: agents.token.slice(0, 10), clientId: String(agents.clientId), userId: String(agent.id), scopes: ['read'],
        client: { id: String(agents.clientId), name: 'test client' }, user: { id: String(agent.id), email: agent.email },
      });
      expect(res.data.oauthToken.token).toHaveLength(10);

      for (const id of ['999999', 'abc', '0', '-1']) {
        const missing = await gql(SHOW, { id }, { authorization: admin.basic });
        expect(missing.body).toEqual({ data: { oauthToken: null } });
      }
      // another account's token is exactly as absent as an unknown one
      const foreign = await gql(SHOW, { id: String(agents.id) }, { authorization: otherAdmin.basic });
      expect(foreign.body).toEqual({ data: { oauthToken: null } });
    });

    it("lets agents and end users see their own tokens and answers null for another user's", async () => {
      const adminsToken = await insertToken(ctx, admin);
      for (const who of [agent, endUser]) {
        const own = await insertToken(ctx, who, { scopes: ['read'] });
        const mine = await gql(SHOW, { id: String(own.id) }, bearer(own.token));
        // their own token and their own user; its client is for admins only (docs/api.md, "Scopes and roles"), like oauthClient(id)
        expect(mine.data.oauthToken).toMatchObject({ id: String(own.id), user: { email: who.email }, client: null });
        expect(mine.body.errors).toEqual([expect.objectContaining({ path: ['oauthToken', 'client'], extensions: { code: 'FORBIDDEN' } })]);
        expect((await gql(SHOW, { id: String(own.id) }, { authorization: who.basic })).data.oauthToken.id).toBe(String(own.id));
        expect((await gql(SHOW, { id: String(adminsToken.id) }, bearer(own.token))).body).toEqual({ data: { oauthToken: null } });
        expect((await gql(SHOW, { id: String(adminsToken.id) }, { authorization: who.basic })).body).toEqual({ data: { oauthToken: null } });
      }
    });
  });

  describe('oauthTokens connection', () => {
    let walker: TestUser;
    let ids: string[];
    let clientIds: bigint[];
    const list = async (variables: Record<string, unknown>, headers: Headers = { authorization: walker.basic }) => {
      const res = await gql(LIST, variables, headers);
      expect(res.body.errors).toBeUndefined();
      return res.data.oauthTokens as Connection;
    };
    const nodeIds = (c: Connection) => c.edges.map((e) => e.node.id);

    beforeAll(async () => {
      // An account of its own: 125 tokens of two users over three clients.
      const account = await ctx.createAccount();
      walker = await ctx.createUser(account, 'admin');
      const colleague = await ctx.createUser(account, 'agent');
      clientIds = [];
      for (let i = 0; i < 3; i++) clientIds.push((await insertToken(ctx, i ? colleague : walker)).clientId);
      await ctx.db.prisma.oAuthToken.createMany({
        data: Array.from({ length: 122 }, (_, i) => ({
          accountId: account, clientId: clientIds[i % 3], userId: i % 2 ? colleague.id : walker.id,
          tokenHash: hmacHex(TEST_HASH_KEY, randomUrlSafe()), tokenPrefix: `pfx${String(i).padStart(7, '0')}`, scopes: ['read'],
        })),
      });
      const rows = await ctx.db.prisma.oAuthToken.findMany({ where: { accountId: account }, orderBy: { id: 'asc' }, select: { id: true } });
      ids = rows.map((r) => String(r.id));
      expect(ids).toHaveLength(125);
    });

    it('walks forward with first/after: every token once, id ascending, pageInfo right at both ends', async () => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let after: string | undefined;
      for (let page = 0; ; page++) {
        const conn = await list({ first: 40, after });
        expect(conn.totalCount).toBe(125);
        expect(conn.pageInfo.hasPreviousPage).toBe(page > 0);
        expect(conn.pageInfo.startCursor).toBe(conn.edges[0].cursor);
        expect(conn.pageInfo.endCursor).toBe(conn.edges.at(-1)!.cursor);
        seen.push(...nodeIds(conn));
        sizes.push(conn.edges.length);
        if (!conn.pageInfo.hasNextPage) break;
        after = conn.pageInfo.endCursor!;
      }
      expect(sizes).toEqual([40, 40, 40, 5]);
      expect(seen).toEqual(ids);
    });

    it('walks backward with last/before from the end: every token once, pageInfo right at both ends', async () => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let before: string | undefined;
      for (let page = 0; ; page++) {
        const conn = await list({ last: 40, before });
        expect(conn.totalCount).toBe(125);
        expect(conn.pageInfo.hasNextPage).toBe(page > 0); // the first backward page is the tail
        expect(conn.pageInfo.startCursor).toBe(conn.edges[0].cursor);
        expect(conn.pageInfo.endCursor).toBe(conn.edges.at(-1)!.cursor);
        seen.unshift(...nodeIds(conn));
        sizes.push(conn.edges.length);
        if (!conn.pageInfo.hasPreviousPage) break;
        before = conn.pageInfo.startCursor!;
      }
      expect(sizes).toEqual([40, 40, 40, 5]);
      expect(seen).toEqual(ids);
    });

    it("an edge's cursor resumes right after (or before) that edge", async () => {
      const page = await list({ first: 10 });
      const fromFifth = await list({ first: 3, after: page.edges[4].cursor });
      expect(nodeIds(fromFifth)).toEqual(ids.slice(5, 8));
      expect(fromFifth.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
      const beforeFifth = await list({ last: 3, before: page.edges[4].cursor });
      expect(nodeIds(beforeFifth)).toEqual(ids.slice(1, 4));
      expect(beforeFifth.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
      const beforeSecond = await list({ last: 3, before: page.edges[1].cursor });
      expect(nodeIds(beforeSecond)).toEqual(ids.slice(0, 1));
      expect(beforeSecond.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    });

    it('clamps first and last to 100 and defaults to 100', async () => {
      const forward = await list({ first: 1000 });
      expect(nodeIds(forward)).toEqual(ids.slice(0, 100));
      expect(forward.pageInfo.hasNextPage).toBe(true);
      expect(nodeIds(await list({ last: 1000 }))).toEqual(ids.slice(-100));
      expect(nodeIds(await list({}))).toEqual(ids.slice(0, 100));
    });

    it('filters by clientId; an unknown, malformed or foreign client filters to nothing', async () => {
      const rows = await ctx.db.prisma.oAuthToken.findMany({ where: { clientId: clientIds[1] }, orderBy: { id: 'asc' }, select: { id: true } });
      expect(rows.length).toBeGreaterThan(40);
      const conn = await list({ clientId: String(clientIds[1]), first: 100 });
      expect(nodeIds(conn)).toEqual(rows.map((r) => String(r.id)));
      expect(conn.totalCount).toBe(rows.length);
      for (const other of ['987654', 'abc', clientId]) {
        const none = await list({ clientId: other });
        expect(none).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } });
      }
    });

    it('refuses tampered and garbage cursors, after+before together and a size below 1 with BAD_REQUEST', async () => {
      const cursor = (await list({ first: 1 })).edges[0].cursor;
      const [payload, signature] = cursor.split('.');
      const otherId = Buffer.from(ids[60]).toString('base64url');
      const cases: Record<string, unknown>[] = [
        { after: `${otherId}.${signature}` }, // points elsewhere with the old signature
        { before: `${otherId}.${signature}` },
        { after: `${payload}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}` },
        { after: 'abc' },
        { after: `${cursor}.x` },
        { after: cursor, before: cursor },
        { first: 0 },
        { last: -5 },
      ];
      for (const variables of cases) {
        const res = await gql(LIST, variables, { authorization: walker.basic });
        expect({ variables, code: res.code, data: res.data }).toEqual({ variables, code: 'BAD_REQUEST', data: null });
      }
    });

    it('is for admins: agents and end users get FORBIDDEN, even for their own tokens; other accounts see none of these', async () => {
      const own = await insertToken(ctx, agent, { scopes: ['read'] });
      for (const headers of [{ authorization: agent.basic }, bearer(own.token), { authorization: endUser.basic }]) {
        const res = await gql(LIST, {}, headers);
        expect(res.code).toBe('FORBIDDEN');
        expect(res.data).toBeNull();
      }
      const theirs = await list({ first: 100 }, { authorization: otherAdmin.basic });
      expect(nodeIds(theirs).some((id) => ids.includes(id))).toBe(false);
    });
  });

  describe('currentOAuthToken and revokeCurrentOAuthToken', () => {
    it('shows the presented token, with used_at written on first use, and its user; its client only to admins', async () => {
      const { token, id, clientId: tokenClient } = await insertToken(ctx, agent, { scopes: ['read'] });
      const res = await gql(CURRENT, {}, bearer(token));
      expect(res.body.errors).toEqual([expect.objectContaining({ path: ['currentOAuthToken', 'client'], extensions: { code: 'FORBIDDEN' } })]);
      const current = res.data.currentOAuthToken;
      expect(current).toMatchObject({
        id: String(id), token: token.slice(0, 10), clientId: String(tokenClient), userId: String(agent.id), scopes: ['read'],
        expiresAt: null, refreshToken: null, url: `https://help.example.com/api/v2/oauth/tokens/${id}.json`,
        client: null, user: { email: agent.email },
      });
      const admins = await insertToken(ctx, admin, { scopes: ['read'] });
      const asAdmin = await gql(CURRENT, {}, bearer(admins.token));
      expect(asAdmin.body.errors).toBeUndefined();
      expect(asAdmin.data.currentOAuthToken).toMatchObject({ client: { name: 'test client' }, user: { email: admin.email } });
      // the answer carries the used_at this very request stored
      const row = await tokenRow(id);
      expect(current.usedAt).toBe((row.used_at as Date).toISOString());
      expect(current.createdAt).toBe((row.created_at as Date).toISOString());
    });

    it('is the impersonating token itself (its own user), not the impersonated end user', async () => {
      const { token, id } = await insertToken(ctx, admin, { scopes: ['read', 'impersonate'] });
      const res = await gql(`{ me { id role } ${CURRENT_FIELD} }`, {}, { ...bearer(token), 'x-on-behalf-of': endUser.email });
      expect(res.data.me).toEqual({ id: String(endUser.id), role: 'END_USER' });
      // the request acts as the end user: the admin's user record and the client are not theirs to read
      expect(res.data.currentOAuthToken).toMatchObject({ id: String(id), userId: String(admin.id), user: null, client: null });
      expect(res.body.errors).toEqual([expect.objectContaining({ path: ['currentOAuthToken', 'client'], extensions: { code: 'FORBIDDEN' } })]);
    });

    it('revokes the presented token: the very next request with it gets 401 UNAUTHENTICATED', async () => {
      const { token, id } = await insertToken(ctx, endUser, { scopes: ['read'] }); // a read token may still revoke itself
      const res = await gql(REVOKE_CURRENT, {}, bearer(token));
      expect(res.body).toEqual({ data: { revokeCurrentOAuthToken: true } });
      expect((await tokenRow(id)).revoked_at).toBeInstanceOf(Date);
      const next = await gql(CURRENT, {}, bearer(token));
      expect(next.status).toBe(401);
      expect(next.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(next.code).toBe('UNAUTHENTICATED');
      expect(next.data).toBeUndefined();
      expect((await gql(SHOW, { id: String(id) }, { authorization: admin.basic })).data.oauthToken).toBeNull();
    });

    it('with Basic auth there is no current token: BAD_REQUEST, and nothing is revoked; without credentials UNAUTHENTICATED', async () => {
      const live = await ctx.db.prisma.oAuthToken.count({ where: { revokedAt: null } });
      for (const op of [CURRENT, REVOKE_CURRENT]) {
        const res = await gql(op, {}, { authorization: agent.basic });
        expect(res.code).toBe('BAD_REQUEST');
        expect(res.body.errors[0].message).toMatch(/Bearer/);
        expect(res.data).toBeNull();
        expect((await gql(op)).code).toBe('UNAUTHENTICATED');
      }
      expect(await ctx.db.prisma.oAuthToken.count({ where: { revokedAt: null } })).toBe(live);
    });
  });

  describe('revokeOAuthToken(id)', () => {
    it('lets an admin revoke any token of the account: it stops authenticating and leaves show and list', async () => {
      const agents = await insertToken(ctx, agent, { scopes: ['read'] });
      const res = await gql(REVOKE, { id: String(agents.id) }, { authorization: admin.basic });
      expect(res.body).toEqual({ data: { revokeOAuthToken: true } });
      expect((await tokenRow(agents.id)).revoked_at).toBeInstanceOf(Date);
      expect((await gql('{ me { id } }', {}, bearer(agents.token))).code).toBe('UNAUTHENTICATED');
      expect((await gql(SHOW, { id: String(agents.id) }, { authorization: admin.basic })).data.oauthToken).toBeNull();
      const listed = await gql(LIST, { clientId: String(agents.clientId) }, { authorization: admin.basic });
      expect(listed.data.oauthTokens).toMatchObject({ totalCount: 0, edges: [] });
      // a second time it is gone
      expect((await gql(REVOKE, { id: String(agents.id) }, { authorization: admin.basic })).code).toBe('NOT_FOUND');
    });

    it("answers NOT_FOUND for unknown ids and another account's token, which stays live", async () => {
      const foreign = await insertToken(ctx, otherAdmin);
      for (const id of ['999999', 'abc', '0', String(foreign.id)]) {
        const res = await gql(REVOKE, { id }, { authorization: admin.basic });
        expect({ id, code: res.code, data: res.data }).toEqual({ id, code: 'NOT_FOUND', data: null });
      }
      expect((await tokenRow(foreign.id)).revoked_at).toBeNull();
      expect((await gql('{ me { id } }', {}, bearer(foreign.token))).data.me.id).toBe(String(otherAdmin.id));
    });

    it("lets agents and end users revoke their own tokens but not another user's", async () => {
      const adminsToken = await insertToken(ctx, admin);
      for (const who of [agent, endUser]) {
        const own = await insertToken(ctx, who, { scopes: ['read', 'write'] });
        const spare = await insertToken(ctx, who);
        expect((await gql(REVOKE, { id: String(adminsToken.id) }, { authorization: who.basic })).code).toBe('NOT_FOUND');
        expect((await gql(REVOKE, { id: String(adminsToken.id) }, bearer(own.token))).code).toBe('NOT_FOUND');
        expect((await gql(REVOKE, { id: String(spare.id) }, bearer(own.token))).body).toEqual({ data: { revokeOAuthToken: true } });
        expect((await gql(REVOKE, { id: String(own.id) }, { authorization: who.basic })).body).toEqual({ data: { revokeOAuthToken: true } });
        expect((await tokenRow(spare.id)).revoked_at).toBeInstanceOf(Date);
        expect((await tokenRow(own.id)).revoked_at).toBeInstanceOf(Date);
      }
      expect((await tokenRow(adminsToken.id)).revoked_at).toBeNull();
    });
  });

  describe('scopes (docs/api.md, "Scopes and roles")', () => {
    it('a read token may query but every mutation but revoking itself is FORBIDDEN', async () => {
      const { token, id } = await insertToken(ctx, admin, { scopes: ['read'] });
      const victim = await insertToken(ctx, admin);
      expect((await gql(LIST, { first: 1 }, bearer(token))).body.errors).toBeUndefined();
      expect((await gql(SHOW, { id: String(victim.id) }, bearer(token))).data.oauthToken.id).toBe(String(victim.id));
      const before = await tokenCount();
      expect((await gql(CREATE, { input: { clientId, scopes: ['read'] } }, bearer(token))).code).toBe('FORBIDDEN');
      expect((await gql(REVOKE, { id: String(victim.id) }, bearer(token))).code).toBe('FORBIDDEN');
      expect(await tokenCount()).toBe(before);
      expect((await tokenRow(victim.id)).revoked_at).toBeNull();
      expect((await gql(REVOKE_CURRENT, {}, bearer(token))).body).toEqual({ data: { revokeCurrentOAuthToken: true } });
      expect((await tokenRow(id)).revoked_at).toBeInstanceOf(Date);
    });

    it('a write token may mutate but not query (except its own current token)', async () => {
      const { token } = await insertToken(ctx, admin, { scopes: ['write'] });
      // (it mints write, which it covers: a token never mints read without having it, token-minting.test.ts)
      const created = await gql(CREATE, { input: { clientId, scopes: ['write'] } }, bearer(token));
      expect(created.data.createOAuthToken.token).toMatch(URL_SAFE_43);
      const victim = await insertToken(ctx, admin);
      expect((await gql(REVOKE, { id: String(victim.id) }, bearer(token))).data.revokeOAuthToken).toBe(true);
      expect((await gql(LIST, {}, bearer(token))).code).toBe('FORBIDDEN');
      expect((await gql(SHOW, { id: String(victim.id) }, bearer(token))).code).toBe('FORBIDDEN');
      expect((await gql('{ currentOAuthToken { id } }', {}, bearer(token))).body.errors).toBeUndefined();
    });

    it('a token with one invalid scope, even one createOAuthToken handed out, is FORBIDDEN (403) on every operation', async () => {
      const inserted = await insertToken(ctx, admin, { scopes: ['read', 'write', 'tickets:delete'] });
      const created = await gql(CREATE, { input: { clientId, scopes: ['read', 'write', 'Read'] } }, { authorization: admin.basic });
      expect(created.data.createOAuthToken.scopes).toEqual(['read', 'write', 'Read']); // accepted as given (docs/api.md, "Scopes and roles")
      const victim = await insertToken(ctx, admin);
      for (const { token, id } of [inserted, { token: created.data.createOAuthToken.token as string, id: created.data.createOAuthToken.id as string }]) {
        const operations: [string, Record<string, unknown>][] = [
          [CURRENT, {}], [REVOKE_CURRENT, {}], [LIST, {}], [SHOW, { id: String(id) }],
          [CREATE, { input: { clientId, scopes: ['read'] } }], [REVOKE, { id: String(victim.id) }], ['{ me { id } }', {}],
        ];
        for (const [query, variables] of operations) {
          const res = await gql(query, variables, bearer(token));
          expect({ query, status: res.status, code: res.code }).toEqual({ query, status: 403, code: 'FORBIDDEN' });
        }
        expect((await tokenRow(id)).revoked_at).toBeNull();
      }
      expect((await tokenRow(victim.id)).revoked_at).toBeNull();
    });
  });

  describe('SQL statements per request: no N+1 (docs/api.md, "GraphQL"; issue 6)', () => {
    let boss: TestUser;
    let bossBearer: Headers;
    let accountId: bigint;
    /** statements the process sent while answering one request */
    const cost = async (send: () => Promise<{ statusCode: number; body: string }>) => {
      const before = ctx.db.statementCount();
      const res = await send();
      const statements = ctx.db.statementCount() - before;
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body).errors).toBeUndefined();
      return statements;
    };
    const costOf = (query: string, headers: Headers) => cost(() => ctx.graphql(query, {}, headers));
    const NESTED = (first: number) => `{ oauthTokens(all: true, first: ${first}) { totalCount edges { node { id client { name } user { email } } } } }`;

    beforeAll(async () => {
      // 100 tokens over 5 clients and 5 users, plus the boss's own Bearer token (and its client)
      accountId = await ctx.createAccount();
      boss = await ctx.createUser(accountId, 'admin');
      const users = [boss];
      for (let i = 0; i < 4; i++) users.push(await ctx.createUser(accountId, i % 2 ? 'agent' : 'end_user'));
      const clients: bigint[] = [];
      for (let i = 0; i < 5; i++) clients.push(BigInt(await createClient(boss, `client ${i}`)));
      await ctx.db.prisma.oAuthToken.createMany({
        data: Array.from({ length: 100 }, (_, i) => ({
          accountId, clientId: clients[i % 5], userId: users[(i * 3 + Math.floor(i / 5)) % 5].id,
          tokenHash: hmacHex(TEST_HASH_KEY, randomUrlSafe()), tokenPrefix: 'prefix0000', scopes: ['read'],
        })),
      });
      bossBearer = bearer((await insertToken(ctx, boss, { scopes: ['read'] })).token);
      // the first use of a token writes used_at (once a minute): spend it here
      await costOf('{ __typename }', bossBearer);
      await costOf('{ __typename }', { authorization: boss.basic }); // and fill the Basic cache
    });

    it('the counter counts every statement the service sends, those of transactions included', async () => {
      // (test fixtures written through Prisma are not the service's statements: on PostgreSQL they have their own pool)
      const before = ctx.db.statementCount();
      await ctx.db.sql('SELECT 1');
      expect(ctx.db.statementCount() - before).toBe(1);
      await ctx.db.sql('SELECT id FROM users WHERE id = $1', [String(boss.id)]);
      expect(ctx.db.statementCount() - before).toBe(2);
      // the service's own transactions (Db.transaction): BEGIN, 2 statements, COMMIT — on PGlite too, where they go through its transaction object
      const inOwnTx = ctx.db.statementCount();
      await ctx.db.transaction(async (sql) => {
        await sql('SELECT count(*) FROM users');
        await sql('SELECT count(*) FROM oauth_tokens WHERE account_id = $1', [String(accountId)]);
      });
      expect(ctx.db.statementCount() - inOwnTx).toBe(4);
    });

    it('authentication costs 1 statement with Bearer (the token lookup) and 1 with cached Basic (throttle windows and user lookup in one)', async () => {
      expect(await costOf('{ __typename }', bossBearer)).toBe(1);
      expect(await costOf('{ __typename }', { authorization: boss.basic })).toBe(1);
    });

    it('oauthTokens with client and user: at most 4 statements after authentication, the same for 1, 10 and 100 tokens', async () => {
      const page = JSON.parse((await ctx.graphql(NESTED(100), {}, bossBearer)).body).data.oauthTokens;
      expect(page.edges).toHaveLength(100);
      expect(new Set(page.edges.map((e: any) => e.node.client.name)).size).toBeGreaterThanOrEqual(5);
      expect(new Set(page.edges.map((e: any) => e.node.user.email)).size).toBeGreaterThanOrEqual(5);

      // Bearer: 1 (auth) + page + totalCount + clients (1 batch) + users (1 batch)
      const bearerAuth = await costOf('{ __typename }', bossBearer);
      const viaBearer = [await costOf(NESTED(1), bossBearer), await costOf(NESTED(10), bossBearer), await costOf(NESTED(100), bossBearer)];
      expect(new Set(viaBearer).size).toBe(1);
      expect(viaBearer[0] - bearerAuth).toBeLessThanOrEqual(4);
      // Basic: the same work after its 2 statements of authentication
      const basicAuth = await costOf('{ __typename }', { authorization: boss.basic });
      const viaBasic = [await costOf(NESTED(10), { authorization: boss.basic }), await costOf(NESTED(100), { authorization: boss.basic })];
      expect(viaBasic[0]).toBe(viaBasic[1]);
      expect(viaBasic[0] - basicAuth).toBe(viaBearer[0] - bearerAuth);
    });

    it("oauthClients with their tokens (and the tokens' client and user): constant in the number of clients", async () => {
      const query = '{ oauthClients { id name tokens { id client { name } user { email } } } }';
      const auth = await costOf('{ __typename }', bossBearer);
      const few = await costOf(query, bossBearer);
      // ten more clients, each with tokens of several users
      const users = await ctx.db.prisma.user.findMany({ where: { accountId }, select: { id: true } });
      for (let i = 0; i < 10; i++) {
        const id = BigInt(await createClient(boss, `more ${i}`));
        await ctx.db.prisma.oAuthToken.createMany({
          data: users.map((u) => ({ accountId, clientId: id, userId: u.id, tokenHash: hmacHex(TEST_HASH_KEY, randomUrlSafe()), tokenPrefix: 'prefix0000', scopes: ['read'] })),
        });
      }
      const res = JSON.parse((await ctx.graphql(query, {}, bossBearer)).body).data.oauthClients;
      expect(res).toHaveLength(16);
      expect(res.every((c: any) => c.tokens.length > 0)).toBe(true);
      const many = await costOf(query, bossBearer);
      expect(many).toBe(few);
      // clients + their tokens (1 batch) + the tokens' clients and users (1 batch each)
      expect(many - auth).toBeLessThanOrEqual(4);
      expect((await costOf('{ oauthClients { id tokens { id } } }', bossBearer)) - auth).toBeLessThanOrEqual(2);
    });

    it('the current token costs exactly 1 statement with Bearer, REST and GraphQL, once used_at is fresh', async () => {
      const { token, id } = await insertToken(ctx, boss, { scopes: ['read'] });
      const rest = () => ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', headers: bearer(token) });
      // first use: the lookup writes used_at (once a minute) in the same statement
      expect(await cost(rest)).toBe(1);
      const usedAt = (await tokenRow(id)).used_at;
      expect(usedAt).toBeInstanceOf(Date);
      // within 60 s: the lookup only, no write
      expect(await cost(rest)).toBe(1);
      expect(await costOf('{ currentOAuthToken { id token usedAt scopes } }', bearer(token))).toBe(1);
      expect((await tokenRow(id)).used_at).toEqual(usedAt);
      expect((await rest()).json().token).toMatchObject({ id: Number(id), token: token.slice(0, 10), used_at: (usedAt as Date).toISOString().replace(/\.\d{3}Z$/, 'Z') });
    });
  });
});
