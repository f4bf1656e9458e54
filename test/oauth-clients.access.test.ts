import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';
import {
  clientsDriver,
  failed,
  insertTokenForClient,
  isRest,
  ok,
  restFailure,
  rowJson,
  type ClientJson,
  type ClientsDriver,
} from './helpers/oauth-client-drivers';
import { ALL, ALL_ROUTES, BAD_IDS, BOTH, ID_ROUTES, VALID } from './oauth-clients.cases';

// OAuth clients (docs/api.md, "Tenancy", "Scopes and roles", "Errors", "OAuth clients"): roles, token scopes, tenancy, ids that
// are not positive integers and malformed REST bodies — every table run through
// REST and GraphQL (and the .json REST paths where paths matter).

describe('OAuth clients: access, tenancy and malformed input', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let adminB: TestUser;
  /** account A's client that nobody but A's admin may touch */
  let target: ClientJson;
  let targetToken: { token: string; id: bigint };
  const tokens: Record<string, string> = {};

  /** every client row and token row, to prove a refused request changed nothing */
  const snapshot = async () =>
    rowJson([
      await ctx.db.prisma.oAuthClient.findMany({ orderBy: { id: 'asc' } }),
      await ctx.db.prisma.oAuthToken.findMany({ orderBy: { id: 'asc' }, select: { id: true, clientId: true, revokedAt: true } }),
    ]);
  const targetIntact = async () => {
    expect(await ctx.app.services.oauthClients.verifySecret(target.client_identifier, target.client_secret)).toBe(true);
    const res = await ctx.graphql('{ me { id } }', {}, { authorization: `Bearer ${targetToken.token}` });
    expect(res.json().data?.me?.id).toBe(String(admin.id));
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    const a = await ctx.createAccount();
    admin = await ctx.createUser(a, 'admin');
    agent = await ctx.createUser(a, 'agent');
    endUser = await ctx.createUser(a, 'end_user');
    adminB = await ctx.createUser(await ctx.createAccount(), 'admin');
    target = ok(await clientsDriver(ctx, 'rest', admin.basic).create({ ...VALID, name: 'target of A' }));
    targetToken = await insertTokenForClient(ctx, admin, target.id);
    tokens.read = (await insertToken(ctx, admin, { scopes: ['read'] })).token;
    tokens.readWrite = (await insertToken(ctx, admin, { scopes: ['read', 'write'] })).token;
    tokens.writeOfReadClient = (await insertToken(ctx, admin, { scopes: ['write'], clientScopes: 'read' })).token;
    tokens.readWriteOfReadClient = (await insertToken(ctx, admin, { scopes: ['read', 'write'], clientScopes: 'read' })).token;
    tokens.writeOfWriteClient = (await insertToken(ctx, admin, { scopes: ['write'], clientScopes: 'write' })).token;
    tokens.ticketsRead = (await insertToken(ctx, admin, { scopes: ['tickets:read', 'tickets:write'] })).token;
    tokens.agentReadWrite = (await insertToken(ctx, agent, { scopes: ['read', 'write'] })).token;
  });
  afterAll(() => ctx.close());

  /** A client of A's admin to spend on a route that succeeds (delete, update …). */
  const spare = async () => ok(await clientsDriver(ctx, 'rest', admin.basic).create({ ...VALID, name: 'spare' }));

  describe.each(ALL)('roles over %s', (transport) => {
    // both generate-secret routes: the new secret works and the old one stops at once
    const rotated = async (_d: ClientsDriver, c: ClientJson, out: unknown) => {
      const { client_secret: secret } = out as { client_secret: string };
      expect(await ctx.app.services.oauthClients.verifySecret(c.client_identifier, secret)).toBe(true);
      expect(await ctx.app.services.oauthClients.verifySecret(c.client_identifier, c.client_secret)).toBe(false);
    };

    /** What each route's success leaves behind, read back through the API: not only a 2xx of the right shape. */
    const effects: Record<string, (d: ClientsDriver, c: ClientJson, out: unknown) => Promise<void>> = {
      list: async (_d, c, out) => {
        const ids = (out as ClientJson[]).map((x) => x.id);
        expect(ids).toEqual(expect.arrayContaining([target.id, c.id]));
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
      },
      create: async (d, _c, out) => {
        const created = out as ClientJson;
        expect(ok(await d.show(created.id))).toMatchObject({ id: created.id, name: VALID.name, company: VALID.company, scopes: VALID.scopes, redirect_uris: VALID.redirect_uris });
        expect(ok(await d.list()).map((x) => x.id)).toContain(created.id);
      },
      show: async (_d, c, out) => {
        expect(out).toMatchObject({ id: c.id, name: 'spare', client_identifier: c.client_identifier, client_secret: `${c.client_secret.slice(0, 10)}...` });
      },
      update: async (d, c) => {
        expect(ok(await d.show(c.id))).toMatchObject({ id: c.id, name: 'Hijacked', update_date: expect.any(String) });
      },
      delete: async (d, c) => {
        expect(failed(await d.show(c.id)).code).toBe('NOT_FOUND');
        expect(ok(await d.list()).map((x) => x.id)).not.toContain(c.id);
      },
      'generate secret (POST /{id})': rotated,
      'generate secret (POST /{id}/client_secret)': rotated,
      'generate secret (PUT /{id}/generate_secret)': rotated,
    };

    it.each(ALL_ROUTES.map((r) => [r.title, r] as const))('an admin may %s, and it takes effect', async (title, route) => {
      const c = await spare();
      const d = clientsDriver(ctx, transport, admin.basic);
      const out = ok(await route.call(d, c.id));
      expect(Object.keys(effects)).toContain(title);
      await effects[title](d, c, out);
    });

    const refused = [
      ['an agent', 'FORBIDDEN', () => agent.basic],
      ['an end user', 'FORBIDDEN', () => endUser.basic],
      ['an agent with a read/write token', 'FORBIDDEN', () => `Bearer ${tokens.agentReadWrite}`],
      ['no credentials', 'UNAUTHENTICATED', () => undefined],
      ['an unknown bearer token', 'UNAUTHENTICATED', () => `Bearer ${'u'.repeat(43)}`],
    ] as const;
    const table = refused.flatMap(([who, code, auth]) => ALL_ROUTES.map((r) => [who, r.title, code, auth, r] as const));
    it.each(table)('%s may not %s (%s), and nothing changes', async (_who, _title, code, auth, route) => {
      const before = await snapshot();
      const f = failed(await route.call(clientsDriver(ctx, transport, auth()), target.id));
      expect(f.code).toBe(code);
      if (isRest(transport)) expect(f.res.statusCode).toBe(code === 'FORBIDDEN' ? 403 : 401);
      else expect(f.res.json().data?.oauthClient ?? null).toBeNull();
      expect(await snapshot()).toBe(before);
    });
  });

  describe.each(BOTH)('token scopes over %s', (transport) => {
    const asToken = (name: string) => clientsDriver(ctx, transport, `Bearer ${tokens[name]}`);

    it('a read token lists and shows but may not write', async () => {
      const d = asToken('read');
      expect(ok(await d.list()).map((c) => c.id)).toContain(target.id);
      expect(ok(await d.show(target.id)).id).toBe(target.id);
      const before = await snapshot();
      for (const route of ALL_ROUTES.filter((r) => r.write)) {
        expect([route.title, failed(await route.call(d, target.id)).code]).toEqual([route.title, 'FORBIDDEN']);
      }
      expect(await snapshot()).toBe(before);
    });

    it.each(['writeOfReadClient', 'readWriteOfReadClient'])('a write token of a read-only client may not write (%s)', async (name) => {
      const d = asToken(name);
      const before = await snapshot();
      for (const route of ALL_ROUTES.filter((r) => r.write)) {
        expect([route.title, failed(await route.call(d, target.id)).code]).toEqual([route.title, 'FORBIDDEN']);
      }
      expect(await snapshot()).toBe(before);
      if (name === 'readWriteOfReadClient') expect(ok(await d.list()).length).toBeGreaterThan(0);
    });

    it('a write token of a write client may create but not list (no read scope)', async () => {
      const d = asToken('writeOfWriteClient');
      const created = ok(await d.create({ ...VALID, name: 'by a write token' }));
      expect(created.agent_id).toBe(Number(admin.id));
      expect(failed(await d.list()).code).toBe('FORBIDDEN');
    });

    it('a read/write token of a read/write client may do everything', async () => {
      const d = asToken('readWrite');
      const c = ok(await d.create({ ...VALID, name: 'by a read/write token' }));
      ok(await d.update(c.id, { name: 'renamed by token' }));
      ok(await d.generateSecret(c.id));
      ok(await d.delete(c.id));
      expect(ok(await d.list()).map((x) => x.id)).not.toContain(c.id);
    });

    it('resource scopes (tickets:read, tickets:write) grant nothing here', async () => {
      const d = asToken('ticketsRead');
      expect(failed(await d.list()).code).toBe('FORBIDDEN');
      expect(failed(await d.create({ ...VALID })).code).toBe('FORBIDDEN');
    });
  });

  describe.each(ALL)('authentication and authorization come before body validation, over %s', (transport) => {
    // A caller that may not use the endpoint learns nothing about its body rules.
    const bodies = [
      ['"name": ""', { ...VALID, name: '' }, false],
      ['"name": 123', { ...VALID, name: 123 }, true],
    ] as const;
    const callers = [
      ['no credentials', 'UNAUTHENTICATED', () => undefined],
      ['an agent', 'FORBIDDEN', () => agent.basic],
      ['a read token', 'FORBIDDEN', () => `Bearer ${tokens.read}`],
    ] as const;
    const table = callers.flatMap(([who, code, auth]) =>
      bodies.filter(([, , restOnly]) => !restOnly || isRest(transport)).map(([what, body]) => [who, what, code, auth, body] as const),
    );
    it.each(table)('%s sending %s gets %s on create and update', async (_who, _what, code, auth, body) => {
      const d = clientsDriver(ctx, transport, auth());
      const before = await snapshot();
      expect(failed(await d.create(body)).code).toBe(code);
      expect(failed(await d.update(target.id, body)).code).toBe(code);
      expect(await snapshot()).toBe(before);
    });
  });

  describe.each(ALL)('tenancy over %s', (transport) => {
    it.each(ID_ROUTES.map((r) => [r.title, r] as const))(
      "another account's admin gets not found on %s, exactly like a missing id, and the client is untouched",
      async (_t, route) => {
        const asB = clientsDriver(ctx, transport, adminB.basic);
        const before = await snapshot();
        const f = failed(await route.call(asB, target.id));
        expect(f.code).toBe('NOT_FOUND');
        if (!isRest(transport)) expect(f.nullResult ?? false).toBe(route.read);

        const missing = failed(await route.call(asB, 2_000_000_000));
        expect([f.res.statusCode, f.res.body]).toEqual([missing.res.statusCode, missing.res.body]);
        expect(await snapshot()).toBe(before);
        await targetIntact();
      },
    );

    it("another account's list does not show this account's clients", async () => {
      const asB = clientsDriver(ctx, transport, adminB.basic);
      const mine = ok(await asB.create({ ...VALID, name: 'B own' }));
      const ids = ok(await asB.list()).map((c) => c.id);
      expect(ids).toContain(mine.id);
      expect(ids).not.toContain(target.id);
      const ofB = await ctx.db.prisma.oAuthClient.findMany({ where: { accountId: adminB.accountId }, orderBy: { id: 'asc' } });
      expect(ids).toEqual(ofB.map((r) => Number(r.id)));
      // and the other way round
      expect(ok(await clientsDriver(ctx, transport, admin.basic).list()).map((c) => c.id)).not.toContain(mine.id);
    });
  });

  describe.each(ALL)('ids that are not positive integers over %s', (transport) => {
    const table = ID_ROUTES.flatMap((r) => BAD_IDS.map((id) => [r.title, id, r] as const));
    it.each(table)('%s with id %s is not found (never 400 or 500)', async (_t, id, route) => {
      const before = await snapshot();
      const f = failed(await route.call(clientsDriver(ctx, transport, admin.basic), id));
      expect(f.code).toBe('NOT_FOUND');
      if (isRest(transport)) expect(f.res.statusCode).toBe(404);
      else {
        expect(f.res.statusCode).toBe(200);
        expect(f.nullResult ?? false).toBe(route.read);
      }
      expect(await snapshot()).toBe(before);
    });
  });

  describe('malformed REST bodies', () => {
    const bodies = [
      ['a JSON array', '[]'],
      ['a JSON array of an object', JSON.stringify([{ ...VALID }])],
      ['a JSON string', '"name=x"'],
      ['a JSON number', '42'],
      ['JSON null', 'null'],
      ['garbage', '{name: x'],
      ['a trailing comma', '{"name": "x",}'],
      ['truncated JSON', JSON.stringify({ ...VALID }).slice(0, -3)],
    ] as const;
    const routes = [
      ['POST /oauth/clients', 'POST', () => '/api/v2/oauth/clients'],
      ['POST /oauth/clients.json', 'POST', () => '/api/v2/oauth/clients.json'],
      ['PUT /oauth/clients/{id}', 'PUT', () => `/api/v2/oauth/clients/${target.id}`],
      ['PUT /oauth/clients/{id}.json', 'PUT', () => `/api/v2/oauth/clients/${target.id}.json`],
      ['POST /oauth/clients/{id} (generate secret)', 'POST', () => `/api/v2/oauth/clients/${target.id}`],
      ['POST /oauth/clients/{id}/client_secret', 'POST', () => `/api/v2/oauth/clients/${target.id}/client_secret`],
      ['PUT /oauth/clients/{id}/generate_secret', 'PUT', () => `/api/v2/oauth/clients/${target.id}/generate_secret`],
    ] as const;
    const table = routes.flatMap(([route, method, url]) => bodies.map(([what, payload]) => [route, what, method, url, payload] as const));

    it.each(table)('%s with %s → 400 InvalidRequest, nothing changes', async (_r, _w, method, url, payload) => {
      const before = await snapshot();
      const res = await ctx.inject({ method, url: url(), headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload });
      expect([restFailure(res).code, res.statusCode]).toEqual(['BAD_REQUEST', 400]);
      expect(res.json().description).toEqual(expect.any(String));
      expect(await snapshot()).toBe(before);
      await targetIntact();
    });
  });
});
