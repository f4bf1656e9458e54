import { createTestApp, insertToken, TEST_HASH_KEY, type TestContext, type TestUser } from './helpers/test-app';
import { hmacHex } from '../src/domain/crypto';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const json = { 'content-type': 'application/json' };

describe('OAuth tokens (docs/api.md, "OAuth tokens")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let clientId: number;
  let otherAdmin: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    otherAdmin = await ctx.createUser(await ctx.createAccount(), 'admin');
    const res = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/clients', headers: { ...json, authorization: admin.basic },
      payload: { name: 'dashboard', scopes: 'read write', redirect_uris: 'https://app.example.com/cb' },
    });
    clientId = res.json().id;
  });
  afterAll(() => ctx.close());

  const create = (payload: unknown, url = '/api/v2/oauth/tokens', who: TestUser = admin) =>
    ctx.inject({ method: 'POST', url, headers: { ...json, authorization: who.basic }, payload: payload as object });

  describe('create', () => {
    it('returns 201, the full token once, a Location header and the fields of the contract', async () => {
      const res = await create({ token: { client_id: clientId, scopes: ['read', 'write'] } });
      expect(res.statusCode).toBe(201);
      const token = res.json().token;
      expect(token).toMatchObject({ client_id: clientId, user_id: Number(admin.id), scopes: ['read', 'write'], expires_at: null, used_at: null, refresh_token: null });
      expect(token.token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      expect(token.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(token.url).toMatch(new RegExp(`/api/v2/oauth/tokens/${token.id}\\.json$`));
      expect(res.headers.location).toBe(token.url);

      const row = await ctx.db.prisma.oAuthToken.findUniqueOrThrow({ where: { id: BigInt(token.id) } });
      expect(row.tokenHash).toBe(hmacHex(TEST_HASH_KEY, token.token));
      expect(row.tokenPrefix).toBe(token.token.slice(0, 10));
      expect(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(token.token);
      expect(ctx.logs.join('')).not.toContain(token.token);

      // Everywhere else: the first 10 characters only.
      const shown = await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens/${token.id}.json`, headers: { authorization: admin.basic } });
      expect(shown.json().token.token).toBe(token.token.slice(0, 10));
      const current = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', headers: bearer(token.token) });
      expect(current.json().token).toMatchObject({ id: token.id, token: token.token.slice(0, 10) });
      const list = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens', headers: { authorization: admin.basic } });
      expect(list.json().tokens.find((t: { id: number }) => t.id === token.id).token).toBe(token.token.slice(0, 10));
    });

    it('takes client_id from the query parameter when the body has none', async () => {
      const res = await create({ token: { scopes: ['read'] } }, `/api/v2/oauth/tokens.json?client_id=${clientId}`);
      expect(res.statusCode).toBe(201);
      expect(res.json().token.client_id).toBe(clientId);
    });

    it.each([
      ['client_id missing', { token: { scopes: ['read'] } }, 'client_id', 'BlankValue'],
      ['client_id of no client', { token: { client_id: 999999, scopes: ['read'] } }, 'client_id', 'NotFound'],
      ['client_id not a number', { token: { client_id: 'abc', scopes: ['read'] } }, 'client_id', 'InvalidValue'],
      ['scopes missing', { token: { client_id: 0 } }, 'scopes', 'BlankValue'],
      ['scopes empty', { token: { client_id: 0, scopes: [] } }, 'scopes', 'BlankValue'],
      ['scopes not an array', { token: { client_id: 0, scopes: 'read' } }, 'scopes', 'InvalidValue'],
      ['scopes with a non-string', { token: { client_id: 0, scopes: ['read', 5] } }, 'scopes', 'InvalidValue'],
    ])('refuses %s with 422 and stores nothing', async (_name, payload, field, code) => {
      const body = JSON.parse(JSON.stringify(payload).replace('"client_id":0', `"client_id":${clientId}`));
      const before = await ctx.db.prisma.oAuthToken.count();
      const res = await create(body);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ error: 'RecordInvalid', details: { [field]: [{ error: code }] } });
      expect(await ctx.db.prisma.oAuthToken.count()).toBe(before);
    });

    it("refuses another account's client as NotFound", async () => {
      const res = await create({ token: { client_id: clientId, scopes: ['read'] } }, '/api/v2/oauth/tokens', otherAdmin);
      expect(res.statusCode).toBe(422);
      expect(res.json().details.client_id[0].error).toBe('NotFound');
    });

    it('accepts invalid scopes (docs/api.md, "Scopes and roles") but the token is then refused everywhere with 403', async () => {
      const res = await create({ token: { client_id: clientId, scopes: ['read', 'tickets:delete'] } });
      expect(res.statusCode).toBe(201);
      const token = res.json().token.token;
      for (const [method, url] of [['GET', '/api/v2/oauth/tokens/current.json'], ['DELETE', '/api/v2/oauth/tokens/current'], ['GET', '/api/v2/oauth/clients'], ['GET', '/api/v2/oauth/tokens']] as const) {
        const r = await ctx.inject({ method, url, headers: bearer(token) });
        expect(r.statusCode).toBe(403);
        expect(r.json()).toEqual({ error: 'Forbidden', description: 'You do not have access to this resource' });
      }
    });

    it('is for admins only', async () => {
      expect((await create({ token: { client_id: clientId, scopes: ['read'] } }, '/api/v2/oauth/tokens', agent)).statusCode).toBe(403);
      expect((await create({ token: { client_id: clientId, scopes: ['read'] } }, '/api/v2/oauth/tokens', endUser)).statusCode).toBe(403);
    });
  });

  describe('scopes (docs/api.md, "Scopes and roles")', () => {
    // [scopes, may read (GET / query), may write (POST, DELETE / mutation)]
    const table: [string[], boolean, boolean][] = [
      [['read'], true, false],
      [['write'], false, true],
      [['read', 'write'], true, true],
      [['tickets'], false, false],
      [['tickets:read'], false, false],
      [['tickets:write', 'read'], true, false],
      [['auditlogs:read'], false, false],
      [['any_channel:write'], false, false],
      [['web_widget:write', 'write'], false, true],
      [['impersonate'], false, false],
      [['impersonate', 'read'], true, false],
    ];
    it.each(table)('%j: read %s, write %s (REST and GraphQL)', async (scopes, canRead, canWrite) => {
      const { token } = await insertToken(ctx, admin, { scopes });
      const list = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/clients', headers: bearer(token) });
      expect(list.statusCode).toBe(canRead ? 200 : 403);
      const query = await ctx.graphql('{ oauthClients { id } }', {}, bearer(token));
      expect(query.json().errors?.[0]?.extensions?.code).toBe(canRead ? undefined : 'FORBIDDEN');
      const post = await ctx.inject({ method: 'POST', url: '/api/v2/oauth/clients', headers: { ...json, ...bearer(token) }, payload: { name: 'n', scopes: 'read', redirect_uris: 'https://x.example/cb' } });
      expect(post.statusCode).toBe(canWrite ? 201 : 403);
      const mutation = await ctx.graphql('mutation { createOAuthClient(input: { name: "n", scopes: "read", redirectUris: ["https://x.example/cb"] }) { id } }', {}, bearer(token));
      expect(mutation.json().errors?.[0]?.extensions?.code).toBe(canWrite ? undefined : 'FORBIDDEN');
      // current-token self access holds whatever the (valid) scopes
      expect((await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current', headers: bearer(token) })).statusCode).toBe(200);
    });

    it.each([['auditlogs:write'], ['web_widget:read'], ['any_channel:read'], ['Read'], ['tickets:delete'], ['foo'], [''], ['users:impersonate'], ['read:tickets']])(
      'invalid scope %j → 403 on every request, current included',
      async (scope) => {
        const { token } = await insertToken(ctx, admin, { scopes: ['read', 'write', scope] });
        expect((await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current', headers: bearer(token) })).statusCode).toBe(403);
        expect((await ctx.graphql('{ currentOAuthToken { id } }', {}, bearer(token))).json().errors[0].extensions.code).toBe('FORBIDDEN');
      },
    );

    it("caps a token by its client's scopes: write from a read-only client cannot write", async () => {
      const { token } = await insertToken(ctx, admin, { scopes: ['read', 'write'], clientScopes: 'read' });
      expect((await ctx.inject({ method: 'GET', url: '/api/v2/oauth/clients', headers: bearer(token) })).statusCode).toBe(200);
      const post = await ctx.inject({ method: 'POST', url: '/api/v2/oauth/clients', headers: { ...json, ...bearer(token) }, payload: { name: 'n', scopes: 'read', redirect_uris: 'https://x.example/cb' } });
      expect(post.statusCode).toBe(403);
    });
  });

  describe('visibility', () => {
    it('agents and end users show and revoke their own tokens; another user\'s answers 404', async () => {
      const own = await insertToken(ctx, agent, { scopes: ['read', 'write'] });
      const adminsToken = await insertToken(ctx, admin);
      const agentAuth = bearer(own.token);
      expect((await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens/${own.id}`, headers: agentAuth })).statusCode).toBe(200);
      const foreign = await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens/${adminsToken.id}`, headers: { authorization: agent.basic } });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual({ error: 'RecordNotFound', description: 'Not found' });
      expect((await ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/tokens/${adminsToken.id}`, headers: { authorization: endUser.basic } })).statusCode).toBe(404);
      expect((await ctx.db.prisma.oAuthToken.findUniqueOrThrow({ where: { id: adminsToken.id } })).revokedAt).toBeNull();
      const mine = await insertToken(ctx, endUser);
      expect((await ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/tokens/${mine.id}.json`, headers: { authorization: endUser.basic } })).statusCode).toBe(204);
    });

    it('admins see every token of their account, and nothing of another account', async () => {
      const agents = await insertToken(ctx, agent);
      expect((await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens/${agents.id}`, headers: { authorization: admin.basic } })).statusCode).toBe(200);
      expect((await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens/${agents.id}`, headers: { authorization: otherAdmin.basic } })).statusCode).toBe(404);
      expect((await ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/tokens/${agents.id}`, headers: { authorization: otherAdmin.basic } })).statusCode).toBe(404);
      const list = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens', headers: { authorization: otherAdmin.basic } });
      expect(list.json().tokens).toEqual([]);
      expect((await ctx.graphql(`{ oauthToken(id: "${agents.id}") { id } }`, {}, { authorization: otherAdmin.basic })).json().data.oauthToken).toBeNull();
      expect((await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens', headers: { authorization: agent.basic } })).statusCode).toBe(403);
    });

    it.each(['abc', '0', '-1', '1.5', '99999999999999999999999'])('id %s → 404', async (id) => {
      expect((await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens/${id}`, headers: { authorization: admin.basic } })).statusCode).toBe(404);
      expect((await ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/tokens/${id}`, headers: { authorization: admin.basic } })).statusCode).toBe(404);
    });
  });

  describe('current token and revocation', () => {
    it('GraphQL and REST current answer the presented token; Basic gets 400', async () => {
      const { token, id } = await insertToken(ctx, endUser, { scopes: ['read'] });
      expect((await ctx.graphql('{ currentOAuthToken { id token } }', {}, bearer(token))).json().data.currentOAuthToken).toEqual({ id: String(id), token: token.slice(0, 10) });
      const basic = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', headers: { authorization: admin.basic } });
      expect(basic.statusCode).toBe(400);
      expect(basic.json().error).toBe('InvalidRequest');
    });

    it('revoking the current token makes the very next request fail, and hides it from show/list', async () => {
      const { token, id } = await insertToken(ctx, agent, { scopes: ['read'] });
      const del = await ctx.inject({ method: 'DELETE', url: '/api/v2/oauth/tokens/current.json', headers: bearer(token) });
      expect(del.statusCode).toBe(204);
      expect(del.body).toBe('');
      expect((await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', headers: bearer(token) })).statusCode).toBe(401);
      expect((await ctx.inject({ method: 'GET', url: `/api/v2/oauth/tokens/${id}`, headers: { authorization: admin.basic } })).statusCode).toBe(404);
    });

    it('GraphQL revokeOAuthToken revokes; a missing id is NOT_FOUND', async () => {
      const { token, id } = await insertToken(ctx, admin);
      expect((await ctx.graphql(`mutation { revokeOAuthToken(id: "${id}") }`, {}, { authorization: admin.basic })).json().data.revokeOAuthToken).toBe(true);
      expect((await ctx.graphql('{ me { id } }', {}, bearer(token))).statusCode).toBe(401);
      expect((await ctx.graphql(`mutation { revokeOAuthToken(id: "${id}") }`, {}, { authorization: admin.basic })).json().errors[0].extensions.code).toBe('NOT_FOUND');
    });

    it('sets used_at on use and does not rewrite it within 60 s', async () => {
      const { token, id } = await insertToken(ctx, admin);
      await ctx.graphql('{ me { id } }', {}, bearer(token));
      const first = (await ctx.db.prisma.oAuthToken.findUniqueOrThrow({ where: { id } })).usedAt;
      expect(first).toBeInstanceOf(Date);
      await new Promise((r) => setTimeout(r, 1100));
      await ctx.graphql('{ me { id } }', {}, bearer(token));
      expect((await ctx.db.prisma.oAuthToken.findUniqueOrThrow({ where: { id } })).usedAt).toEqual(first);
      // an hour-old used_at is refreshed on the next use
      await ctx.db.prisma.oAuthToken.update({ where: { id }, data: { usedAt: new Date(Date.now() - 3600_000) } });
      await ctx.graphql('{ me { id } }', {}, bearer(token));
      expect((await ctx.db.prisma.oAuthToken.findUniqueOrThrow({ where: { id } })).usedAt!.getTime()).toBeGreaterThan(Date.now() - 60_000);
    });
  });

  describe('impersonation (X-On-Behalf-Of)', () => {
    it('an admin token with impersonate acts as an end user of the account', async () => {
      const { token } = await insertToken(ctx, admin, { scopes: ['read', 'impersonate'] });
      const res = await ctx.graphql('{ me { id role } }', {}, { ...bearer(token), 'x-on-behalf-of': endUser.email });
      expect(res.json().data.me).toEqual({ id: String(endUser.id), role: 'END_USER' });
      // as the end user it may not list clients (admins only)
      expect((await ctx.inject({ method: 'GET', url: '/api/v2/oauth/clients', headers: { ...bearer(token), 'x-on-behalf-of': endUser.email } })).statusCode).toBe(403);
    });

    it.each([
      ['Basic auth', async () => ({ authorization: admin.basic }), () => endUser.email],
      ['a token without impersonate', async () => bearer((await insertToken(ctx, admin, { scopes: ['read'] })).token), () => endUser.email],
      ['a non-admin holder', async () => bearer((await insertToken(ctx, agent, { scopes: ['read', 'impersonate'] })).token), () => endUser.email],
      ['an unknown email', async () => bearer((await insertToken(ctx, admin, { scopes: ['read', 'impersonate'] })).token), () => 'ghost@example.com'],
      ['an agent (not an end user)', async () => bearer((await insertToken(ctx, admin, { scopes: ['read', 'impersonate'] })).token), () => agent.email],
      ["another account's user", async () => bearer((await insertToken(ctx, admin, { scopes: ['read', 'impersonate'] })).token), () => otherAdmin.email],
    ])('refuses %s with 403', async (_name, auth, email) => {
      const res = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current', headers: { ...(await auth()), 'x-on-behalf-of': email() } });
      expect(res.statusCode).toBe(403);
    });
  });
});
