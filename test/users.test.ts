import type { LightMyRequestResponse } from 'fastify';
import { UNUSABLE_PASSWORD_HASH } from '../src/domain/directory/user.repository';
import { claimKdfTurn, MAX_CONCURRENT_KDF, MAX_WAITING_KDF } from '../src/domain/auth/kdf-queue';
import { clientOf } from '../src/domain/auth/client-address';
import { auditOf } from './helpers/audit';
import { basicHeader, createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Users": the directory's users over REST and GraphQL, as an admin, an
// agent, an end user and their tokens see them.

const json = { 'content-type': 'application/json' };
const bearer = (token: string) => `Bearer ${token}`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('users (docs/api.md, "Users")', () => {
  let ctx: TestContext;
  let account: bigint;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let otherAdmin: TestUser;
  let seq = 0;

  beforeAll(async () => {
    ctx = await createTestApp();
    account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    otherAdmin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, authorization: string, payload?: unknown): Promise<LightMyRequestResponse> =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: payload === undefined ? { authorization } : { ...json, authorization }, payload: payload as object });
  const email = (what = 'user') => `${what}-${++seq}@acme.test`;
  /** a user made through the API by the admin, with a password */
  const newUser = async (role = 'agent', password = 'first-password-1') => {
    const res = await send('POST', '/users', admin.basic, { user: { name: `User ${++seq}`, email: email(role), role, password } });
    expect(res.statusCode).toBe(201);
    const user = res.json().user;
    return { ...user, password, basic: basicHeader(user.email, password) } as { id: number; email: string; name: string; role: string; password: string; basic: string };
  };

  describe('create', () => {
    it('answers 201 with the user and a Location, stores it, lets it sign in, and audits it without the password', async () => {
      const address = email('Ann');
      const res = await send('POST', '/users', admin.basic, { user: { name: ' Ann ', email: address, role: 'agent', password: 'ann-password-1', id: 99, created_at: 'x' } });
      expect(res.statusCode).toBe(201);
      const user = res.json().user;
      expect(user).toEqual({
        id: expect.any(Number), url: `http://localhost:80/api/v2/users/${user.id}.json`, name: 'Ann', email: address, role: 'agent', active: true,
        created_at: expect.stringMatching(ISO), updated_at: null,
      });
      expect(res.headers.location).toBe(user.url);
      const row = await ctx.db.prisma.user.findUniqueOrThrow({ where: { id: BigInt(user.id) } });
      expect(row).toMatchObject({ accountId: account, emailKey: address.toLowerCase(), role: 'agent' });
      expect(row.passwordHash).toMatch(/^scrypt\$/);

      const me = await send('GET', '/users/me.json', basicHeader(address, 'ann-password-1'));
      expect(me.json().user).toMatchObject({ id: user.id, email: address });

      const [audit] = await auditOf(ctx, 'user', user.id);
      expect(audit).toMatchObject({
        action: 'create', source_label: 'Ann', changed_fields: ['name', 'email', 'role', 'password'], actor_id: String(admin.id), via: 'api',
        request_id: res.headers['x-request-id'], account_id: String(account),
      });
      expect(JSON.stringify(audit) + ctx.logs.join('')).not.toContain('ann-password-1');
    });

    it('takes a flat body too, and makes an end user by default', async () => {
      const res = await send('POST', '/users.json', admin.basic, { name: 'Flat', email: email('flat') });
      expect(res.statusCode).toBe(201);
      expect(res.json().user).toMatchObject({ name: 'Flat', role: 'end_user', active: true });
    });

    it('without a password the user cannot sign in with Basic (the same 401) until an admin sets one', async () => {
      const address = email('nopw');
      const created = await send('POST', '/users', admin.basic, { user: { name: 'No Password', email: address, role: 'agent' } });
      expect(created.statusCode).toBe(201);
      const id = created.json().user.id;
      expect((await ctx.db.prisma.user.findUniqueOrThrow({ where: { id: BigInt(id) } })).passwordHash).toBe(UNUSABLE_PASSWORD_HASH);
      for (const guess of ['', 'anything-at-all', UNUSABLE_PASSWORD_HASH]) {
        const res = await send('GET', '/users/me', basicHeader(address, guess));
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: "Couldn't authenticate you" });
      }
      const set = await send('POST', `/users/${id}/password`, admin.basic, { password: 'now-a-password' });
      expect([set.statusCode, set.json()]).toEqual([200, {}]);
      expect((await send('GET', '/users/me', basicHeader(address, 'now-a-password'))).statusCode).toBe(200);
    });

    it.each([
      ['no email', { name: 'X' }, { email: [{ error: 'BlankValue', description: 'Email: cannot be blank' }] }],
      ['a malformed email', { name: 'X', email: 'not-an-email' }, { email: [{ error: 'InvalidValue', description: 'Email: not-an-email is not properly formatted' }] }],
      ['no name', { email: 'noname@acme.test' }, { name: [{ error: 'BlankValue', description: 'Name: cannot be blank' }] }],
      ['a blank name', { name: '   ', email: 'blank@acme.test' }, { name: [{ error: 'BlankValue', description: 'Name: cannot be blank' }] }],
      ['a name over 255', { name: 'n'.repeat(256), email: 'long@acme.test' }, { name: [{ error: 'TooLong', description: 'Name: is too long (maximum is 255 characters)' }] }],
      ['an unknown role', { name: 'X', email: 'role@acme.test', role: 'owner' }, { role: [{ error: 'InvalidValue', description: 'Role: must be one of admin, agent, end_user' }] }],
      ['a short password', { name: 'X', email: 'pw@acme.test', password: 'short' }, { password: [{ error: 'InvalidValue', description: 'Password: must be at least 8 characters' }] }],
      ['a password over 1024', { name: 'X', email: 'pw2@acme.test', password: 'p'.repeat(1025) }, { password: [{ error: 'TooLong', description: 'Password: is too long (maximum is 1024 characters)' }] }],
      ['a number for a name', { name: 5, email: 'num@acme.test' }, { name: [{ error: 'InvalidValue', description: 'Name: must be a string' }] }],
      ['a NUL in the name', { name: 'a\u0000b', email: 'nul@acme.test' }, { name: [{ error: 'InvalidValue', description: 'Name: must not contain NUL characters' }] }],
      ['several problems', { email: 5, role: 'x' }, {
        email: [{ error: 'InvalidValue', description: 'Email: must be a string' }],
        role: [{ error: 'InvalidValue', description: 'Role: must be one of admin, agent, end_user' }],
      }],
    ])('refuses %s with 422 and stores nothing', async (_what, body, details) => {
      const before = await ctx.db.prisma.user.count();
      const res = await send('POST', '/users', admin.basic, { user: body });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ error: 'RecordInvalid', description: 'Record validation errors', details });
      expect(await ctx.db.prisma.user.count()).toBe(before);
    });

    it('refuses an email already used in the account, whatever its case; another account may use it', async () => {
      const res = await send('POST', '/users', admin.basic, { user: { name: 'Twin', email: agent.email.toUpperCase() } });
      expect(res.statusCode).toBe(422);
      expect(res.json().details).toEqual({ email: [{ error: 'InvalidValue', description: `Email: ${agent.email.toUpperCase()} is already being used by another user` }] });
      const elsewhere = await send('POST', '/users', otherAdmin.basic, { user: { name: 'Twin', email: agent.email } });
      expect(elsewhere.statusCode).toBe(201);
    });
  });

  describe('who may', () => {
    it('admins only create users (Basic agent and end user 403), and a read-only token cannot write', async () => {
      const body = { user: { name: 'Nope', email: email('nope') } };
      expect((await send('POST', '/users', agent.basic, body)).statusCode).toBe(403);
      expect((await send('POST', '/users', endUser.basic, body)).statusCode).toBe(403);
      const readOnly = await insertToken(ctx, admin, { scopes: ['read'] });
      expect((await send('POST', '/users', bearer(readOnly.token), body)).statusCode).toBe(403);
      expect((await send('PUT', `/users/${agent.id}`, bearer(readOnly.token), { user: { name: 'x' } })).statusCode).toBe(403);
      expect((await send('DELETE', `/users/${agent.id}`, bearer(readOnly.token))).statusCode).toBe(403);
      expect((await ctx.inject({ method: 'GET', url: '/api/v2/users' })).statusCode).toBe(401);
      expect((await send('GET', '/users', agent.basic)).statusCode).toBe(403);
      expect((await send('GET', '/users', endUser.basic)).statusCode).toBe(403);
    });

    it('grants users:read and users:write tokens the user endpoints, and tickets:read nothing', async () => {
      const usersRead = await insertToken(ctx, admin, { scopes: ['users:read'] });
      const usersWrite = await insertToken(ctx, admin, { scopes: ['users:write'] });
      const tickets = await insertToken(ctx, admin, { scopes: ['tickets:read'] });
      expect((await send('GET', '/users', bearer(usersRead.token))).statusCode).toBe(200);
      expect((await send('GET', `/users/${agent.id}`, bearer(usersRead.token))).statusCode).toBe(200);
      expect((await send('POST', '/users', bearer(usersRead.token), { user: { name: 'R', email: email('r') } })).statusCode).toBe(403);
      expect((await send('POST', '/users', bearer(usersWrite.token), { user: { name: 'W', email: email('w') } })).statusCode).toBe(201);
      expect((await send('GET', '/users', bearer(usersWrite.token))).statusCode).toBe(403);
      expect((await send('GET', '/users', bearer(tickets.token))).statusCode).toBe(403);
      expect((await send('GET', '/users/me', bearer(tickets.token))).statusCode).toBe(403);
      // the directory's other endpoints are no users resource
      expect((await send('GET', '/groups', bearer(usersRead.token))).statusCode).toBe(403);
    });
  });

  describe('show', () => {
    it('admins see any user of the account; others only themselves; another account\'s id and junk ids are 404', async () => {
      const shown = await send('GET', `/users/${agent.id}.json`, admin.basic);
      expect(shown.statusCode).toBe(200);
      expect(shown.json().user).toMatchObject({ id: Number(agent.id), email: agent.email, role: 'agent', active: true });
      expect((await send('GET', `/users/${agent.id}`, agent.basic)).json().user.id).toBe(Number(agent.id));
      expect((await send('GET', `/users/${endUser.id}`, endUser.basic)).statusCode).toBe(200);
      for (const [who, id] of [[agent, admin.id], [endUser, agent.id], [admin, otherAdmin.id]] as const) {
        const res = await send('GET', `/users/${id}`, who.basic);
        expect([res.statusCode, res.json()]).toEqual([404, { error: 'RecordNotFound', description: 'Not found' }]);
      }
      for (const id of ['0', '-1', 'abc', '1.5', '99999999999999999999', `${agent.id}x`]) {
        expect((await send('GET', `/users/${id}`, admin.basic)).statusCode).toBe(404);
        expect((await send('PUT', `/users/${id}`, admin.basic, { name: 'x' })).statusCode).toBe(404);
        expect((await send('DELETE', `/users/${id}`, admin.basic)).statusCode).toBe(404);
      }
    });

    it('GET /users/me is the caller, with Basic or a token', async () => {
      const token = await insertToken(ctx, endUser, { scopes: ['read'] });
      const res = await send('GET', '/users/me', bearer(token.token));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ user: expect.objectContaining({ id: Number(endUser.id), email: endUser.email, role: 'end_user' }) });
    });
  });

  describe('list', () => {
    let listing: { admin: TestUser; ids: number[] };

    beforeAll(async () => {
      const own = await ctx.createAccount();
      const a = await ctx.createUser(own, 'admin');
      const ids = [Number(a.id)];
      for (const role of ['agent', 'agent', 'end_user', 'agent'] as const) ids.push(Number((await ctx.createUser(own, role)).id));
      listing = { admin: a, ids };
    });

    it('pages by cursor like the tokens: meta and links, next and previous', async () => {
      const first = await send('GET', '/users.json?page[size]=2', listing.admin.basic);
      expect(first.statusCode).toBe(200);
      const body = first.json();
      expect(body.users.map((u: { id: number }) => u.id)).toEqual(listing.ids.slice(0, 2));
      expect(body.meta).toEqual({ has_more: true, after_cursor: expect.any(String), before_cursor: expect.any(String) });
      expect(body.links.prev).toBeNull();
      const nextUrl = new URL(body.links.next);
      expect(nextUrl.pathname).toBe('/api/v2/users.json');
      const second = (await ctx.inject({ method: 'GET', url: nextUrl.pathname + nextUrl.search, headers: { authorization: listing.admin.basic } })).json();
      expect(second.users.map((u: { id: number }) => u.id)).toEqual(listing.ids.slice(2, 4));
      const prevUrl = new URL(second.links.prev);
      const back = (await ctx.inject({ method: 'GET', url: prevUrl.pathname + prevUrl.search, headers: { authorization: listing.admin.basic } })).json();
      expect(back.users.map((u: { id: number }) => u.id)).toEqual(listing.ids.slice(0, 2));
      const last = (await send('GET', `/users?page[size]=2&page[after]=${encodeURIComponent(second.meta.after_cursor)}`, listing.admin.basic)).json();
      expect(last.users.map((u: { id: number }) => u.id)).toEqual(listing.ids.slice(4));
      expect([last.meta.has_more, last.links.next]).toEqual([false, null]);
    });

    it('pages by offset with next_page, previous_page and count; filters by role', async () => {
      const page = (await send('GET', '/users?page=2&per_page=2', listing.admin.basic)).json();
      expect(page.users.map((u: { id: number }) => u.id)).toEqual(listing.ids.slice(2, 4));
      expect(page.count).toBe(5);
      expect(page.next_page).toMatch(/\/api\/v2\/users\?page=3&per_page=2$/);
      expect(page.previous_page).toMatch(/\/api\/v2\/users\?page=1&per_page=2$/);
      const all = (await send('GET', '/users', listing.admin.basic)).json();
      expect([all.users.length, all.count, all.next_page, all.previous_page]).toEqual([5, 5, null, null]);
      const agents = (await send('GET', '/users?role=agent', listing.admin.basic)).json();
      expect(agents.users.map((u: { role: string }) => u.role)).toEqual(['agent', 'agent', 'agent']);
      expect(agents.count).toBe(3);
    });

    it.each(['page[size]=0', 'page[after]=junk', 'page=0', 'page=abc', 'per_page=-1', 'page=101&per_page=100', 'role=owner'])('answers 400 to %s', async (q) => {
      const res = await send('GET', `/users?${q}`, listing.admin.basic);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('InvalidRequest');
    });
  });

  describe('update', () => {
    it('changes only the given fields, ignores read-only ones, and audits the fields that changed', async () => {
      const user = await newUser('agent');
      const res = await send('PUT', `/users/${user.id}`, admin.basic, { user: { name: 'Renamed', role: 'agent', email: user.email, id: 1, created_at: 'x', url: 'x' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().user).toMatchObject({ id: user.id, name: 'Renamed', role: 'agent', email: user.email, updated_at: expect.stringMatching(ISO) });
      const promoted = await send('PUT', `/users/${user.id}.json`, admin.basic, { role: 'admin', name: 'Renamed' });
      expect(promoted.json().user.role).toBe('admin');
      const audit = await auditOf(ctx, 'user', user.id);
      expect(audit.slice(1).map((a) => [a.action, a.changed_fields, a.request_id])).toEqual([
        ['update', ['name'], res.headers['x-request-id']],
        ['update', ['role'], promoted.headers['x-request-id']],
      ]);
      // nothing changed: nothing written
      await send('PUT', `/users/${user.id}`, admin.basic, { name: 'Renamed' });
      expect(await auditOf(ctx, 'user', user.id)).toHaveLength(3);
    });

    it('refuses another user\'s email (422), bad values (422), another account\'s user (404) and non-admins (403)', async () => {
      const user = await newUser('agent');
      const taken = await send('PUT', `/users/${user.id}`, admin.basic, { email: endUser.email.toUpperCase() });
      expect(taken.statusCode).toBe(422);
      expect(taken.json().details.email[0].description).toContain('is already being used by another user');
      const bad = await send('PUT', `/users/${user.id}`, admin.basic, { active: 'yes', role: 'root' });
      expect(bad.statusCode).toBe(422);
      expect(Object.keys(bad.json().details).sort()).toEqual(['active', 'role']);
      const blank = await send('PUT', `/users/${user.id}`, admin.basic, { name: ' ', email: 'nope' });
      expect(Object.keys(blank.json().details).sort()).toEqual(['email', 'name']);
      expect((await send('PUT', `/users/${otherAdmin.id}`, admin.basic, { name: 'x' })).statusCode).toBe(404);
      expect((await send('PUT', `/users/${user.id}`, agent.basic, { name: 'x' })).statusCode).toBe(403);
      expect((await send('PUT', `/users/${user.id}`, admin.basic, '[1]')).statusCode).toBe(400);
    });

    it('a role change takes effect at once, on Basic and on the user\'s existing tokens', async () => {
      const user = await newUser('admin');
      const token = await insertToken(ctx, { ...admin, id: BigInt(user.id) }, { scopes: ['read', 'write'] });
      expect((await send('GET', '/users', user.basic)).statusCode).toBe(200); // Basic, now cached
      expect((await send('GET', '/users', bearer(token.token))).statusCode).toBe(200);
      expect((await send('PUT', `/users/${user.id}`, admin.basic, { role: 'agent' })).statusCode).toBe(200);
      expect((await send('GET', '/users', user.basic)).statusCode).toBe(403);
      expect((await send('GET', '/users', bearer(token.token))).statusCode).toBe(403);
      expect((await send('GET', '/groups', bearer(token.token))).statusCode).toBe(200);
    });
  });

  describe('deactivation and delete', () => {
    it('PUT active: false revokes every token and grant of the user in the same change; Basic and Bearer fail on the very next request', async () => {
      const user = await newUser('agent');
      const holder = { ...agent, id: BigInt(user.id) };
      const tokens = [await insertToken(ctx, holder), await insertToken(ctx, holder, { scopes: ['read'] })];
      const grant = await ctx.db.prisma.oAuthGrant.create({ data: { accountId: account, clientId: tokens[0].clientId, userId: BigInt(user.id), scopes: ['read'] } });
      expect((await send('GET', '/users/me', user.basic)).statusCode).toBe(200);
      expect((await send('GET', '/users/me', bearer(tokens[0].token))).statusCode).toBe(200);

      const res = await send('PUT', `/users/${user.id}`, admin.basic, { user: { active: false } });
      expect([res.statusCode, res.json().user.active]).toEqual([200, false]);
      expect((await send('GET', '/users/me', user.basic)).statusCode).toBe(401);
      for (const t of tokens) expect((await send('GET', '/users/me', bearer(t.token))).statusCode).toBe(401);
      const rows = await ctx.db.prisma.oAuthToken.findMany({ where: { userId: BigInt(user.id) } });
      expect(rows.every((r) => r.revokedAt !== null)).toBe(true);
      expect((await ctx.db.prisma.oAuthGrant.findUniqueOrThrow({ where: { id: grant.id } })).revokedAt).not.toBeNull();
      const [, audit] = await auditOf(ctx, 'user', user.id);
      expect(audit).toMatchObject({ action: 'update', changed_fields: ['active'], change_description: 'Deactivated; 2 tokens revoked' });

      // active again: signs in again, but the revoked tokens stay revoked
      expect((await send('PUT', `/users/${user.id}`, admin.basic, { active: true })).json().user.active).toBe(true);
      expect((await send('GET', '/users/me', user.basic)).statusCode).toBe(200);
      expect((await send('GET', '/users/me', bearer(tokens[0].token))).statusCode).toBe(401);
    });

    it('DELETE deactivates (200 with active false), revokes the tokens, audits destroy; a second DELETE changes nothing', async () => {
      const user = await newUser('end_user');
      const token = await insertToken(ctx, { ...endUser, id: BigInt(user.id) });
      const res = await send('DELETE', `/users/${user.id}`, admin.basic);
      expect(res.statusCode).toBe(200);
      expect(res.json().user).toMatchObject({ id: user.id, active: false });
      expect((await send('GET', '/users/me', bearer(token.token))).statusCode).toBe(401);
      expect((await send('GET', `/users/${user.id}`, admin.basic)).json().user.active).toBe(false);
      const again = await send('DELETE', `/users/${user.id}.json`, admin.basic);
      expect([again.statusCode, again.json().user.active]).toEqual([200, false]);
      const audit = await auditOf(ctx, 'user', user.id);
      expect(audit.map((a) => [a.action, a.changed_fields, a.actor_id])).toEqual([
        ['create', ['name', 'email', 'role', 'password'], String(admin.id)],
        ['destroy', ['active'], String(admin.id)],
      ]);
      expect(audit[1].request_id).toBe(res.headers['x-request-id']);
      expect((await send('DELETE', `/users/${otherAdmin.id}`, admin.basic)).statusCode).toBe(404);
      expect((await send('DELETE', `/users/${user.id}`, agent.basic)).statusCode).toBe(403);
    });

    it('the last active admin of an account can be neither demoted, deactivated nor deleted', async () => {
      const own = await ctx.createAccount();
      const only = await ctx.createUser(own, 'admin');
      const demote = await send('PUT', `/users/${only.id}`, only.basic, { role: 'agent' });
      expect(demote.statusCode).toBe(422);
      expect(demote.json().details).toEqual({ role: [{ error: 'InvalidValue', description: 'Role: the last active admin of the account cannot be demoted' }] });
      const deactivate = await send('PUT', `/users/${only.id}`, only.basic, { active: false });
      expect(deactivate.json().details).toEqual({ active: [{ error: 'InvalidValue', description: 'Active: the last active admin of the account cannot be deactivated or deleted' }] });
      expect((await send('DELETE', `/users/${only.id}`, only.basic)).statusCode).toBe(422);
      // an inactive admin does not count; a second active one does
      const inactive = await ctx.createUser(own, 'admin', { active: false });
      expect((await send('PUT', `/users/${only.id}`, only.basic, { role: 'agent' })).statusCode).toBe(422);
      expect((await send('PUT', `/users/${inactive.id}`, only.basic, { active: true })).statusCode).toBe(200);
      expect((await send('PUT', `/users/${only.id}`, only.basic, { role: 'agent' })).statusCode).toBe(200);
      expect((await send('DELETE', `/users/${inactive.id}`, inactive.basic)).statusCode).toBe(422);
      const stored = await ctx.db.prisma.user.findMany({ where: { accountId: own, role: 'admin', active: true } });
      expect(stored.map((u) => u.id)).toEqual([inactive.id]);
    });
  });

  describe('passwords', () => {
    it('changing your own needs the right previous_password; the old password stops working at once', async () => {
      const user = await newUser('agent', 'old-password-1');
      expect((await send('GET', '/users/me', user.basic)).statusCode).toBe(200); // cached
      const before = (await ctx.db.prisma.user.findUniqueOrThrow({ where: { id: BigInt(user.id) } })).passwordChangedAt;

      const missing = await send('PUT', `/users/${user.id}/password`, user.basic, { password: 'new-password-1' });
      expect([missing.statusCode, missing.json().details]).toEqual([422, { previous_password: [{ error: 'BlankValue', description: 'Previous password: cannot be blank' }] }]);
      const wrong = await send('PUT', `/users/${user.id}/password`, user.basic, { password: 'new-password-1', previous_password: 'not-the-password' });
      expect([wrong.statusCode, wrong.json().details]).toEqual([422, { previous_password: [{ error: 'InvalidValue', description: 'Previous password: is not correct' }] }]);
      const short = await send('PUT', `/users/${user.id}/password`, user.basic, { password: 'short', previous_password: 'old-password-1' });
      expect(short.json().details).toEqual({ password: [{ error: 'InvalidValue', description: 'Password: must be at least 8 characters' }] });

      const ok = await send('PUT', `/users/${user.id}/password.json`, user.basic, { password: 'new-password-1', previous_password: 'old-password-1' });
      expect([ok.statusCode, ok.json()]).toEqual([200, {}]);
      const after = (await ctx.db.prisma.user.findUniqueOrThrow({ where: { id: BigInt(user.id) } })).passwordChangedAt;
      expect(after.getTime()).toBeGreaterThan(before.getTime());
      expect((await send('GET', '/users/me', user.basic)).statusCode).toBe(401);
      expect((await send('GET', '/users/me', basicHeader(user.email, 'new-password-1'))).statusCode).toBe(200);
      const audit = (await auditOf(ctx, 'user', user.id)).at(-1)!;
      expect(audit).toMatchObject({ action: 'update', changed_fields: ['password'], actor_id: String(user.id), request_id: ok.headers['x-request-id'] });
      expect(JSON.stringify(await auditOf(ctx, 'user', user.id))).not.toMatch(/new-password-1|old-password-1/);
    });

    it('wrong previous passwords count as failed logins: after 10, 429 with Retry-After, on this route and on Basic', async () => {
      const user = await newUser('agent', 'guarded-password');
      const token = await insertToken(ctx, { ...agent, id: BigInt(user.id) }, { scopes: ['users:write'] });
      for (let i = 0; i < 10; i++) {
        const res = await send('PUT', `/users/${user.id}/password`, bearer(token.token), { password: 'new-password-1', previous_password: `guess-${i}-password` });
        expect(res.statusCode).toBe(422);
      }
      const refused = await send('PUT', `/users/${user.id}/password`, bearer(token.token), { password: 'new-password-1', previous_password: 'guarded-password' });
      expect([refused.statusCode, refused.json().error]).toEqual([429, 'TooManyRequests']);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await send('GET', '/users/me', user.basic)).statusCode).toBe(429);
    });

    it('admins set another user\'s password without the previous one (PUT or POST); others cannot reach anyone else\'s', async () => {
      const user = await newUser('end_user');
      expect((await send('POST', `/users/${user.id}/password`, admin.basic, { password: 'set-by-admin-1' })).statusCode).toBe(200);
      expect((await send('GET', '/users/me', basicHeader(user.email, 'set-by-admin-1'))).statusCode).toBe(200);
      expect((await auditOf(ctx, 'user', user.id)).at(-1)).toMatchObject({ changed_fields: ['password'], change_description: 'Password set by an admin' });
      expect((await send('PUT', `/users/${user.id}/password`, agent.basic, { password: 'by-an-agent-1' })).statusCode).toBe(404);
      expect((await send('PUT', `/users/${otherAdmin.id}/password`, admin.basic, { password: 'cross-account' })).statusCode).toBe(404);
      const readOnly = await insertToken(ctx, admin, { scopes: ['read'] });
      expect((await send('PUT', `/users/${user.id}/password`, bearer(readOnly.token), { password: 'read-only-1' })).statusCode).toBe(403);
      const usersWrite = await insertToken(ctx, admin, { scopes: ['users:write'] });
      // a scope-limited token sets no one else's password (users.elevation.test.ts)
      expect((await send('PUT', `/users/${user.id}/password`, bearer(usersWrite.token), { password: 'users-write-1' })).statusCode).toBe(403);
      const typed = await send('PUT', `/users/${user.id}/password`, admin.basic, { password: 12345678 });
      expect([typed.statusCode, typed.json().details]).toEqual([422, { password: [{ error: 'InvalidValue', description: 'Password: must be a string' }] }]);
    });

    it('an admin hashing passwords takes its place in the KDF queue like a login: full for its address, 503 and nothing changed', async () => {
      const user = await newUser('agent', 'before-the-burst');
      const { token } = await insertToken(ctx, admin); // Bearer: no KDF to authenticate
      const stored = async () => (await ctx.db.prisma.user.findUniqueOrThrow({ where: { id: BigInt(user.id) } })).passwordHash;
      const before = await stored();
      // every place this address may hold (inject's peer is 127.0.0.1), as a burst of guesses from it would
      const held = Array.from({ length: MAX_CONCURRENT_KDF + MAX_WAITING_KDF }, () => claimKdfTurn(clientOf('127.0.0.1')));
      try {
        const set = await send('PUT', `/users/${user.id}/password`, bearer(token), { password: 'during-the-burst' });
        expect([set.statusCode, set.headers['retry-after'], set.json().error]).toEqual([503, '1', 'ServiceUnavailable']);
        expect(await stored()).toBe(before);
        const created = await send('POST', '/users', bearer(token), { user: { name: 'Burst', email: 'burst@acme.test', password: 'during-the-burst' } });
        expect(created.statusCode).toBe(503);
        expect(await ctx.db.prisma.user.findFirst({ where: { email: 'burst@acme.test' } })).toBeNull();
      } finally {
        for (const turn of held) turn.release();
      }
      expect((await send('PUT', `/users/${user.id}/password`, bearer(token), { password: 'after-the-burst' })).statusCode).toBe(200);
      expect((await send('GET', '/users/me', basicHeader(user.email, 'after-the-burst'))).statusCode).toBe(200);
    });
  });

  describe('GraphQL', () => {
    const gql = (who: TestUser | string, query: string, variables?: Record<string, unknown>) =>
      ctx.graphql(query, variables, { authorization: typeof who === 'string' ? who : who.basic });

    it('users is a connection with totalCount and a role filter; user(id) is null when not visible', async () => {
      const res = await gql(admin, '{ users(first: 2, role: AGENT) { totalCount edges { node { id role updatedAt url } } pageInfo { hasNextPage endCursor } } }');
      const users = res.json().data.users;
      expect(users.edges).toHaveLength(2);
      expect(users.edges.every((e: { node: { role: string } }) => e.node.role === 'AGENT')).toBe(true);
      expect(users.totalCount).toBeGreaterThanOrEqual(2);
      expect(users.pageInfo.hasNextPage).toBe(users.totalCount > 2);
      const q = 'query($id: ID!) { user(id: $id) { id email } }';
      expect((await gql(agent, q, { id: String(admin.id) })).json().data.user).toBeNull();
      expect((await gql(admin, q, { id: String(otherAdmin.id) })).json().data.user).toBeNull();
      expect((await gql(agent, q, { id: String(agent.id) })).json().data.user).toEqual({ id: String(agent.id), email: agent.email });
      expect((await gql(agent, '{ users { totalCount } }')).json().errors[0].extensions.code).toBe('FORBIDDEN');
    });

    it('users(last: n) without before is the end of the list: nothing after it, the rest before it; offset pages count them all', async () => {
      const fields = 'totalCount edges { node { id } } pageInfo { hasNextPage hasPreviousPage }';
      const all = (await gql(admin, `{ users(first: 100) { ${fields} } }`)).json().data.users;
      const ids = all.edges.map((e: { node: { id: string } }) => e.node.id);
      expect(ids.length).toBeGreaterThan(2);
      const tail = (await gql(admin, `{ users(last: 2) { ${fields} } }`)).json().data.users;
      expect(tail.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(ids.slice(-2));
      expect(tail.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true });
      const second = (await gql(admin, `{ users(page: 2, perPage: 1) { ${fields} } }`)).json().data.users;
      expect(second.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([ids[1]]);
      expect(second.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: true });
      expect(second.totalCount).toBe(ids.length);
    });

    it('createUser, updateUser, setUserPassword and deleteUser, audited with via graphql', async () => {
      const created = await gql(admin, 'mutation($i: CreateUserInput!) { createUser(input: $i) { id name role active updatedAt } }', {
        i: { name: 'Gql', email: email('gql'), role: 'AGENT' },
      });
      const user = created.json().data.createUser;
      expect(user).toMatchObject({ name: 'Gql', role: 'AGENT', active: true, updatedAt: null });
      const updated = await gql(admin, 'mutation($id: ID!) { updateUser(id: $id, input: { name: "Gql 2" }) { name updatedAt } }', { id: user.id });
      expect(updated.json().data.updateUser).toEqual({ name: 'Gql 2', updatedAt: expect.any(String) });
      const set = await gql(admin, 'mutation($id: ID!) { setUserPassword(id: $id, password: "graphql-password") }', { id: user.id });
      expect(set.json().data.setUserPassword).toBe(true);
      const deleted = await gql(admin, 'mutation($id: ID!) { deleteUser(id: $id) { active } }', { id: user.id });
      expect(deleted.json().data.deleteUser).toEqual({ active: false });
      const audit = await auditOf(ctx, 'user', user.id);
      expect(audit.map((a) => [a.action, a.via, a.changed_fields])).toEqual([
        ['create', 'graphql', ['name', 'email', 'role']],
        ['update', 'graphql', ['name']],
        ['update', 'graphql', ['password']],
        ['destroy', 'graphql', ['active']],
      ]);
      expect(audit[0].request_id).toBe(created.headers['x-request-id']);
      const missing = await gql(admin, 'mutation { deleteUser(id: "999999") { id } }');
      expect(missing.json().errors[0].extensions.code).toBe('NOT_FOUND');
      const invalid = await gql(admin, 'mutation { createUser(input: { email: "x" }) { id } }');
      expect(invalid.json().errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { name: expect.any(Array), email: expect.any(Array) } });
    });

    it('own password over GraphQL needs previousPassword', async () => {
      const user = await newUser('agent', 'gql-old-password');
      const m = 'mutation($id: ID!, $p: String, $pp: String) { setUserPassword(id: $id, password: $p, previousPassword: $pp) }';
      const wrong = await gql(user.basic, m, { id: String(user.id), p: 'gql-new-password', pp: 'wrong-password' });
      expect(wrong.json().errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { previous_password: expect.any(Array) } });
      const ok = await gql(user.basic, m, { id: String(user.id), p: 'gql-new-password', pp: 'gql-old-password' });
      expect(ok.json().data.setUserPassword).toBe(true);
    });
  });
});
