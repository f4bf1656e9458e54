import type { LightMyRequestResponse } from 'fastify';
import { basicHeader, createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md "Users" and "Scopes and roles": granting the admin role, or setting a
// password someone else will sign in with, needs a credential that scopes do not
// limit: a password sign-in (Basic) or a token with unscoped write. A users:write
// token manages users, but cannot make itself an admin or a Basic login.

const json = { 'content-type': 'application/json' };
const bearer = (token: string) => `Bearer ${token}`;
const FORBIDDEN = { error: 'Forbidden', description: 'You do not have access to this resource' };

describe('users: no scope-limited token grants admin or sets a password (docs/api.md "Users")', () => {
  let ctx: TestContext;
  let account: bigint;
  let admin: TestUser;
  let agent: TestUser;
  let usersWrite: string;
  let fullWrite: string;
  let seq = 0;

  beforeAll(async () => {
    ctx = await createTestApp();
    account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    usersWrite = (await insertToken(ctx, admin, { scopes: ['users:write', 'users:read'] })).token;
    fullWrite = (await insertToken(ctx, admin, { scopes: ['write'] })).token;
  });
  afterAll(() => ctx.close());

  const send = (method: 'POST' | 'PUT', url: string, authorization: string, payload: unknown): Promise<LightMyRequestResponse> =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: { ...json, authorization }, payload: payload as object });
  const email = () => `elevated-${++seq}@acme.test`;
  const stored = (address: string) => ctx.db.prisma.user.findFirst({ where: { accountId: account, emailKey: address } });

  it('a users:write token cannot create an admin who then signs in and reads the clients: 403, nothing stored', async () => {
    const address = email();
    const res = await send('POST', '/users', bearer(usersWrite), { user: { name: 'Mallory', email: address, role: 'admin', password: 'mallory-password-1' } });
    expect([res.statusCode, res.json()]).toEqual([403, FORBIDDEN]);
    expect(await stored(address)).toBeNull();
    const clients = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/clients', headers: { authorization: basicHeader(address, 'mallory-password-1') } });
    expect(clients.statusCode).toBe(401);
  });

  it('nor an admin without a password, nor anyone with a password; a user without a password it may create', async () => {
    const admin1 = email();
    expect((await send('POST', '/users', bearer(usersWrite), { user: { name: 'A', email: admin1, role: 'admin' } })).statusCode).toBe(403);
    const agent1 = email();
    expect((await send('POST', '/users', bearer(usersWrite), { user: { name: 'B', email: agent1, role: 'agent', password: 'agent-password-1' } })).statusCode).toBe(403);
    expect(await stored(admin1)).toBeNull();
    expect(await stored(agent1)).toBeNull();
    const plain = await send('POST', '/users', bearer(usersWrite), { user: { name: 'C', email: email(), role: 'agent' } });
    expect(plain.statusCode).toBe(201);
  });

  it('a users:write token cannot promote a user to admin; other updates it may make', async () => {
    const promoted = await send('PUT', `/users/${agent.id}`, bearer(usersWrite), { user: { role: 'admin' } });
    expect([promoted.statusCode, promoted.json()]).toEqual([403, FORBIDDEN]);
    expect((await ctx.db.prisma.user.findUniqueOrThrow({ where: { id: agent.id } })).role).toBe('agent');
    const renamed = await send('PUT', `/users/${agent.id}`, bearer(usersWrite), { user: { name: 'Renamed Agent' } });
    expect(renamed.statusCode).toBe(200);
  });

  it("a users:write token cannot set another user's password; its own, with the previous one, it can", async () => {
    const target = await ctx.createUser(account, 'agent');
    const res = await send('PUT', `/users/${target.id}/password`, bearer(usersWrite), { password: 'taken-over-1' });
    expect([res.statusCode, res.json()]).toEqual([403, FORBIDDEN]);
    expect((await ctx.inject({ method: 'GET', url: '/api/v2/users/me', headers: { authorization: basicHeader(target.email, 'taken-over-1') } })).statusCode).toBe(401);

    const self = await ctx.createUser(account, 'admin', { password: 'own-password-1' });
    const ownToken = (await insertToken(ctx, self, { scopes: ['users:write'] })).token;
    const own = await send('PUT', `/users/${self.id}/password`, bearer(ownToken), { password: 'own-password-2', previous_password: 'own-password-1' });
    expect(own.statusCode).toBe(200);
  });

  it('Basic and an unscoped write token may do all of it', async () => {
    const byBasic = await send('POST', '/users', admin.basic, { user: { name: 'D', email: email(), role: 'admin', password: 'basic-password-1' } });
    expect(byBasic.statusCode).toBe(201);
    const address = email();
    const byToken = await send('POST', '/users', bearer(fullWrite), { user: { name: 'E', email: address, role: 'admin', password: 'token-password-1' } });
    expect(byToken.statusCode).toBe(201);
    const id = byToken.json().user.id;
    expect((await send('PUT', `/users/${agent.id}`, bearer(fullWrite), { user: { role: 'admin' } })).statusCode).toBe(200);
    expect((await send('PUT', `/users/${agent.id}`, admin.basic, { user: { role: 'agent' } })).statusCode).toBe(200);
    expect((await send('PUT', `/users/${id}/password`, bearer(fullWrite), { password: 'token-password-2' })).statusCode).toBe(200);
    // unscoped write from a client that cannot write is no write at all
    const capped = (await insertToken(ctx, admin, { scopes: ['write', 'users:write'], clientScopes: 'read' })).token;
    expect((await send('PUT', `/users/${id}/password`, bearer(capped), { password: 'token-password-3' })).statusCode).toBe(403);
  });

  it('GraphQL: createUser with role ADMIN and setUserPassword are FORBIDDEN for a users:write token', async () => {
    const target = await ctx.createUser(account, 'end_user');
    const create = await ctx.graphql(
      'mutation($input: CreateUserInput!) { createUser(input: $input) { id } }',
      { input: { name: 'G', email: email(), role: 'ADMIN' } },
      { authorization: bearer(usersWrite) },
    );
    expect(create.json().errors[0].extensions.code).toBe('FORBIDDEN');
    const set = await ctx.graphql(
      'mutation($id: ID!) { setUserPassword(id: $id, password: "graphql-password-1") }',
      { id: String(target.id) },
      { authorization: bearer(usersWrite) },
    );
    expect(set.json().errors[0].extensions.code).toBe('FORBIDDEN');
  });
});
