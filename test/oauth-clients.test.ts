import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';
import {
  CLIENT_KEYS,
  clientsDriver,
  failed,
  insertTokenForClient,
  isRest,
  ok,
  rowJson,
  SECRET_VARIANTS,
  type ClientJson,
  type ClientsDriver,
  type Failure,
  type SecretVariant,
  type Transport,
} from './helpers/oauth-client-drivers';
import { ALL, BOTH, CREATE_CASES, IGNORED_FIELDS, UPDATE_CASES, VALID, type BodyCase, type Expect } from './oauth-clients.cases';

// OAuth clients (docs/api.md, "OAuth clients"): the lifecycle, the validation
// table and the secret at rest, each run through REST, REST with `.json` paths
// and GraphQL from the same cases (./oauth-clients.cases.ts).

const ME = '{ me { id } }';
const URL_SAFE_SECRET = /^[A-Za-z0-9_-]{43,}$/;
const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const truncated = (secret: string) => `${secret.slice(0, 10)}...`;

/** The cases a transport can express. */
const casesFor = (transport: Transport, cases: BodyCase[]) => cases.filter((c) => !c.restOnly || isRest(transport)).map((c) => [c.title, c] as const);

/** 422 with exactly the expected fields, each reported with an allowed detail code. */
function expectInvalid(outcome: Failure, expected: Extract<Expect, { invalid: unknown }>['invalid']) {
  expect(outcome.code).toBe('BAD_USER_INPUT');
  expect(Object.keys(outcome.fields!).sort()).toEqual(Object.keys(expected).sort());
  for (const [field, allowed] of Object.entries(expected)) {
    const codes = outcome.fields![field];
    expect(codes.length).toBeGreaterThan(0);
    for (const code of codes) expect([allowed].flat()).toContain(code);
  }
}

describe('OAuth clients (docs/api.md, "OAuth clients")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let adminB: TestUser;
  let clientOfB: ClientJson;
  /** every full secret handed out in this file, for the log check at the end */
  const secrets: string[] = [];

  const countClients = () => ctx.db.prisma.oAuthClient.count();
  // the client's row with its secrets' rows, and its current secret's hash and prefix
  const row = async (id: number) => {
    const client = await ctx.db.prisma.oAuthClient.findUnique({ where: { id: BigInt(id) }, include: { secrets: { orderBy: { id: 'desc' } } } });
    if (!client) return null;
    const current = client.secrets.find((s) => s.expiresAt === null)!;
    return { ...client, secretHash: current.secretHash, secretPrefix: current.secretPrefix };
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
    adminB = await ctx.createUser(await ctx.createAccount(), 'admin');
    clientOfB = ok(await clientsDriver(ctx, 'rest', adminB.basic).create({ ...VALID, name: 'client of B' }));
    secrets.push(clientOfB.client_secret);
  });
  afterAll(() => ctx.close());

  describe.each(ALL)('lifecycle over %s', (transport) => {
    let d: ClientsDriver;
    const create = async (body: Record<string, unknown> = { ...VALID }) => {
      const c = ok(await d.create(body));
      secrets.push(c.client_secret);
      return c;
    };
    beforeAll(() => {
      d = clientsDriver(ctx, transport, admin.basic);
    });

    it('creates a client with the full secret, update_date null and the creating admin as agent_id', async () => {
      const before = await countClients();
      const out = await d.create({ ...VALID, client_type: 'confidential' });
      const c = ok(out);
      secrets.push(c.client_secret);
      expect(Object.keys(c).sort()).toEqual([...CLIENT_KEYS]);
      expect(c).toMatchObject({
        name: VALID.name,
        company: VALID.company,
        client_type: 'confidential',
        scopes: 'read write',
        redirect_uris: VALID.redirect_uris,
        agent_id: Number(admin.id),
        update_date: null,
      });
      expect(Number.isSafeInteger(c.id) && c.id > 0).toBe(true);
      expect(c.client_secret).toMatch(URL_SAFE_SECRET);
      expect(Math.abs(Date.parse(c.create_date) - Date.now())).toBeLessThan(60_000);
      expect(await countClients()).toBe(before + 1);
      expect((await row(c.id))!.accountId).toBe(admin.accountId);

      if (isRest(transport)) {
        expect(out.res.statusCode).toBe(201);
        expect(out.res.headers.location).toMatch(new RegExp(`/api/v2/oauth/clients/${c.id}\\.json$`));
        const raw = out.res.json();
        expect(Object.keys(raw).sort()).toEqual([...CLIENT_KEYS]);
        expect(raw.create_date).toMatch(ISO_SECONDS);
        expect(raw.update_date).toBeNull();
        expect(raw.client_secret).toBe(c.client_secret);
      } else {
        const raw = out.res.json().data.createOAuthClient;
        expect(raw.clientType).toBe('CONFIDENTIAL');
        expect(raw.updateDate).toBeNull();
        expect(raw.clientSecret).toMatch(URL_SAFE_SECRET);
        expect(Number.isNaN(Date.parse(raw.createDate))).toBe(false);
      }
    });

    it('generates a client_identifier of at least 40 url-safe characters, unique across clients (secrets too)', async () => {
      const made = [await create(), await create(), await create()];
      for (const c of made) expect(c.client_identifier).toMatch(/^[A-Za-z0-9_-]{40,}$/);
      const all = await ctx.db.prisma.oAuthClient.findMany({ select: { identifier: true } });
      expect(new Set(all.map((r) => r.identifier)).size).toBe(all.length);
      const secrets = await ctx.db.prisma.oAuthClientSecret.findMany({ select: { secretHash: true } });
      expect(new Set(secrets.map((r) => r.secretHash)).size).toBe(secrets.length);
      expect(new Set(made.map((c) => c.client_secret)).size).toBe(made.length);
    });

    it('show and list return the secret truncated to its first 10 characters followed by "..."', async () => {
      const c = await create();
      const shown = ok(await d.show(c.id));
      expect(shown).toEqual({ ...c, client_secret: truncated(c.client_secret) });
      expect(c.client_secret.startsWith(shown.client_secret.slice(0, -3))).toBe(true);
      const listed = ok(await d.list()).find((x) => x.id === c.id);
      expect(listed).toEqual(shown);
      for (const x of ok(await d.list())) {
        expect(x.client_secret).toMatch(/^[A-Za-z0-9_-]{10}\.\.\.$/);
        expect(x.client_secret).toBe(truncated((await row(x.id))!.secretPrefix));
      }
    });

    it("lists the account's clients only, id ascending", async () => {
      await create({ ...VALID, name: 'list 1' });
      await create({ ...VALID, name: 'list 2' });
      const listed = ok(await d.list());
      const ids = listed.map((c) => c.id);
      const expected = await ctx.db.prisma.oAuthClient.findMany({ where: { accountId: admin.accountId }, orderBy: { id: 'asc' }, select: { id: true } });
      expect(ids).toEqual(expected.map((r) => Number(r.id)));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(ids).not.toContain(clientOfB.id);
      expect(listed.every((c) => c.agent_id === Number(admin.id))).toBe(true);

      const listOfB = ok(await clientsDriver(ctx, transport, adminB.basic).list());
      expect(listOfB.map((c) => c.id)).toEqual([clientOfB.id]);
    });

    it('updates partially: only the given field changes, update_date is set and not before create_date', async () => {
      const c = await create({ ...VALID, client_type: 'confidential', scopes: 'write' });
      const out = await d.update(c.id, { name: 'Renamed client' });
      const u = ok(out);
      expect(u).toEqual({ ...c, name: 'Renamed client', client_secret: truncated(c.client_secret), update_date: expect.any(String) });
      expect(Date.parse(u.update_date!)).toBeGreaterThanOrEqual(Date.parse(u.create_date));
      if (isRest(transport)) expect(out.res.json().update_date).toMatch(ISO_SECONDS);
      expect(ok(await d.show(c.id))).toEqual(u);
    });

    it('refuses "name": "" on update with 422 BlankValue on name and changes nothing', async () => {
      const c = await create();
      const before = rowJson(await row(c.id));
      const f = failed(await d.update(c.id, { name: '' }));
      expectInvalid(f, { name: 'BlankValue' });
      expect(f.details!.name[0].description).toMatch(/name/i);
      expect(rowJson(await row(c.id))).toBe(before);
      expect(ok(await d.show(c.id)).update_date).toBeNull();
    });

    it('deletes with an empty 204, then the client is not found and its tokens are revoked', async () => {
      const c = await create();
      const keep = await create({ ...VALID, name: 'kept' });
      const t1 = await insertTokenForClient(ctx, admin, c.id);
      const t2 = await insertTokenForClient(ctx, admin, c.id, ['read']);
      const other = await insertTokenForClient(ctx, admin, keep.id);
      expect((await ctx.graphql(ME, {}, bearer(t1.token))).statusCode).toBe(200);

      const out = await d.delete(c.id);
      expect(ok(out)).toBe(true);
      if (isRest(transport)) {
        expect(out.res.statusCode).toBe(204);
        expect(out.res.body).toBe('');
      }

      const shown = failed(await d.show(c.id));
      expect(shown.code).toBe('NOT_FOUND');
      if (!isRest(transport)) expect(shown.nullResult).toBe(true);
      expect(failed(await d.delete(c.id)).code).toBe('NOT_FOUND');
      expect(ok(await d.list()).map((x) => x.id)).not.toContain(c.id);
      expect(await row(c.id)).toBeNull();

      const tokens = await ctx.db.prisma.oAuthToken.findMany({ where: { id: { in: [t1.id, t2.id, other.id] } }, orderBy: { id: 'asc' } });
      expect(tokens.map((t) => t.revokedAt !== null)).toEqual([true, true, false]);
      for (const t of [t1, t2]) {
        const res = await ctx.graphql(ME, {}, bearer(t.token));
        expect(res.statusCode).toBe(401);
        expect(res.json().errors[0].extensions.code).toBe('UNAUTHENTICATED');
      }
      expect((await ctx.graphql(ME, {}, bearer(other.token))).json().data.me.id).toBe(String(admin.id));
    });

    const variants: SecretVariant[] = isRest(transport) ? SECRET_VARIANTS : ['id'];
    it.each(variants)('generates a new secret (%s): 200 with the full secret, the old one stops verifying', async (variant) => {
      const c = await create();
      const verify = (secret: string) => ctx.app.services.oauthClients.verifySecret(c.client_identifier, secret);
      expect(await verify(c.client_secret)).toBe(true);

      const out = await d.generateSecret(c.id, variant);
      const { client_secret: fresh } = ok(out);
      secrets.push(fresh);
      if (isRest(transport)) {
        expect(out.res.statusCode).toBe(200);
        expect(out.res.json()).toEqual({ client_secret: fresh });
      }
      expect(fresh).toMatch(URL_SAFE_SECRET);
      expect(fresh).not.toBe(c.client_secret);
      expect(await verify(c.client_secret)).toBe(false);
      expect(await verify(fresh)).toBe(true);
      expect(await ctx.app.services.oauthClients.verifySecret('no-such-client-identifier-000000000000000', fresh)).toBe(false);

      const shown = ok(await d.show(c.id));
      expect(shown).toEqual({ ...c, client_secret: truncated(fresh), update_date: expect.any(String) });
      expect(Date.parse(shown.update_date!)).toBeGreaterThanOrEqual(Date.parse(shown.create_date));
    });

    // GraphQL's input type has no such fields: REST bodies only
    if (isRest(transport)) it('ignores unknown and read-only fields on create and update (REST bodies)', async () => {
      const c = await create({ ...VALID, ...IGNORED_FIELDS });
      expect(c.id).not.toBe(IGNORED_FIELDS.id);
      expect(c.client_identifier).not.toBe(IGNORED_FIELDS.client_identifier);
      expect(c.client_secret).not.toBe(IGNORED_FIELDS.client_secret);
      expect(c.agent_id).toBe(Number(admin.id));
      expect(c.create_date).not.toBe(IGNORED_FIELDS.create_date);
      expect(c.update_date).toBeNull();
      expect(c).not.toHaveProperty('foo');
      expect(await ctx.app.services.oauthClients.verifySecret(c.client_identifier, IGNORED_FIELDS.client_secret)).toBe(false);
      expect(await ctx.db.prisma.oAuthClient.count({ where: { identifier: IGNORED_FIELDS.client_identifier } })).toBe(0);
      expect(await row(IGNORED_FIELDS.id)).toBeNull();
      expect(rowJson(await row(c.id))).not.toContain('bar');

      const u = ok(await d.update(c.id, { ...IGNORED_FIELDS, name: 'after update' }));
      expect(u).toEqual({ ...c, name: 'after update', client_secret: truncated(c.client_secret), update_date: expect.any(String) });
      expect(u.update_date).not.toBe(IGNORED_FIELDS.update_date);
      expect(await ctx.app.services.oauthClients.verifySecret(c.client_identifier, c.client_secret)).toBe(true);
    });
  });

  describe.each(BOTH)('create validation over %s (nothing stored on 422)', (transport) => {
    let d: ClientsDriver;
    beforeAll(() => {
      d = clientsDriver(ctx, transport, admin.basic);
    });

    it.each(casesFor(transport, CREATE_CASES))('%s', async (_title, c) => {
      const before = await countClients();
      const out = await d.create(c.body);
      if ('ok' in c.expect) {
        const created = ok(out);
        secrets.push(created.client_secret);
        expect(created).toMatchObject(c.expect.ok);
        expect(await countClients()).toBe(before + 1);
        expect(ok(await d.show(created.id))).toMatchObject({ ...c.expect.ok, client_secret: truncated(created.client_secret) });
      } else {
        expectInvalid(failed(out), c.expect.invalid);
        expect(await countClients()).toBe(before);
      }
    });
  });

  describe.each(BOTH)('update validation over %s (nothing changed on 422)', (transport) => {
    let d: ClientsDriver;
    beforeAll(() => {
      d = clientsDriver(ctx, transport, admin.basic);
    });

    it.each(casesFor(transport, UPDATE_CASES))('%s', async (_title, c) => {
      const original = ok(await d.create({ ...VALID }));
      secrets.push(original.client_secret);
      const before = rowJson(await row(original.id));
      const out = await d.update(original.id, c.body);
      if ('ok' in c.expect) {
        const updated = ok(out);
        expect(updated).toEqual({ ...original, client_secret: truncated(original.client_secret), update_date: expect.any(String), ...c.expect.ok });
        expect(Date.parse(updated.update_date!)).toBeGreaterThanOrEqual(Date.parse(updated.create_date));
        expect(ok(await d.show(original.id))).toEqual(updated);
      } else {
        expectInvalid(failed(out), c.expect.invalid);
        expect(rowJson(await row(original.id))).toBe(before);
      }
    });
  });

  describe.each(BOTH)('the secret at rest over %s', (transport) => {
    it('is stored only as a hash plus its first 10 characters, and written to no log', async () => {
      const d = clientsDriver(ctx, transport, admin.basic);
      const expectAtRest = async (id: number, secret: string) => {
        expect(secret).toMatch(URL_SAFE_SECRET);
        const stored = (await row(id))!;
        expect(stored.secretHash).not.toBe(secret);
        expect(stored.secretHash).not.toContain(secret);
        expect(stored.secretHash).not.toContain(secret.slice(10));
        expect(stored.secretPrefix).toBe(secret.slice(0, 10));
        // no column of any client row holds the secret (or its part beyond the prefix)
        const everything = rowJson(stored) + rowJson(await ctx.db.sql('SELECT * FROM oauth_clients')) + rowJson(await ctx.db.sql('SELECT * FROM oauth_client_secrets'));
        expect(everything).not.toContain(secret);
        expect(everything).not.toContain(secret.slice(10));
        expect(ctx.logs.length).toBeGreaterThan(0);
        expect(ctx.logs.join('\n')).not.toContain(secret);
      };

      const c = ok(await d.create({ ...VALID }));
      secrets.push(c.client_secret);
      await expectAtRest(c.id, c.client_secret);

      const { client_secret: regenerated } = ok(await d.generateSecret(c.id));
      secrets.push(regenerated);
      await expectAtRest(c.id, regenerated);
      expect(rowJson(await row(c.id))).not.toContain(c.client_secret.slice(0, 10)); // the old prefix is gone too
    });
  });

  it('wrote none of the secrets handed out in this file to the log', () => {
    const all = ctx.logs.join('\n');
    expect(secrets.length).toBeGreaterThan(100);
    expect(all).toContain('"status":201');
    for (const secret of secrets) expect(all).not.toContain(secret);
  });
});
