import { createTestApp, insertToken, basicHeader, type TestContext, type TestUser } from './helpers/test-app';

const ME = '{ me { id email role authenticatedVia } }';

describe('authentication (docs/api.md, "Authentication")', () => {
  let ctx: TestContext;
  let admin: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
  });
  afterAll(() => ctx.close());

  it('answers me for good Basic credentials', async () => {
    const res = await ctx.graphql(ME, {}, { authorization: admin.basic });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.me).toEqual({ id: String(admin.id), email: admin.email, role: 'ADMIN', authenticatedVia: 'basic' });
  });

  it('answers me for a good Bearer token', async () => {
    const { token } = await insertToken(ctx, admin);
    const res = await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` });
    expect(res.json().data.me).toMatchObject({ id: String(admin.id), authenticatedVia: 'bearer' });
  });

  it('refuses a wrong password with 401, the envelope and a Basic challenge', async () => {
    const res = await ctx.graphql(ME, {}, { authorization: basicHeader(admin.email, 'wrong password') });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="api"');
    expect(res.json().errors[0]).toMatchObject({ message: "Couldn't authenticate you", extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('answers an unknown email exactly like a wrong password', async () => {
    const wrongPassword = await ctx.graphql(ME, {}, { authorization: basicHeader(admin.email, 'nope-nope') });
    const unknownEmail = await ctx.graphql(ME, {}, { authorization: basicHeader('nobody@example.com', 'nope-nope') });
    expect(unknownEmail.statusCode).toBe(wrongPassword.statusCode);
    expect(unknownEmail.headers['www-authenticate']).toBe(wrongPassword.headers['www-authenticate']);
    expect(unknownEmail.body).toBe(wrongPassword.body);
  });

  it('refuses a request without credentials', async () => {
    const res = await ctx.graphql(ME);
    expect(res.json().errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(res.json().data).toBeNull();
  });

  it.each([
    ['an unknown scheme', 'Digest abc'],
    ['Basic without a colon', `Basic ${Buffer.from('no-colon').toString('base64')}`],
    ['Basic with garbage', 'Basic %%%%'],
    ['an empty Bearer', 'Bearer '],
    ['a Bearer with illegal characters', 'Bearer abc def ghi'],
  ])('refuses a malformed header: %s', async (_name, header) => {
    const res = await ctx.graphql(ME, {}, { authorization: header });
    expect(res.statusCode).toBe(401);
    expect(res.json().errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses an unknown Bearer token with the invalid_token challenge', async () => {
    const res = await ctx.graphql(ME, {}, { authorization: 'Bearer ' + 'x'.repeat(43) });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('refuses a revoked token', async () => {
    const { token } = await insertToken(ctx, admin, { revokedAt: new Date() });
    const res = await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` });
    expect(res.statusCode).toBe(401);
  });

  it('refuses an expired token', async () => {
    const { token } = await insertToken(ctx, admin, { expiresAt: new Date(Date.now() - 1000) });
    const res = await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` });
    expect(res.statusCode).toBe(401);
  });

  it('refuses a token whose client was deleted', async () => {
    const { token, clientId } = await insertToken(ctx, admin);
    await ctx.db.prisma.oAuthClient.delete({ where: { id: clientId } });
    const res = await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` });
    expect(res.statusCode).toBe(401);
  });

  it('refuses an inactive user, by Basic and by Bearer', async () => {
    const inactive = await ctx.createUser(admin.accountId, 'agent', { active: false });
    const { token } = await insertToken(ctx, inactive);
    expect((await ctx.graphql(ME, {}, { authorization: inactive.basic })).statusCode).toBe(401);
    expect((await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` })).statusCode).toBe(401);
  });

  it('refuses with 403 every request of a token that has an invalid scope', async () => {
    const { token } = await insertToken(ctx, admin, { scopes: ['read', 'tickets:delete'] });
    const res = await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` });
    expect(res.statusCode).toBe(403);
    expect(res.json().errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('compares emails case-insensitively', async () => {
    const res = await ctx.graphql(ME, {}, { authorization: basicHeader(admin.email.toUpperCase(), admin.password) });
    expect(res.json().data.me.id).toBe(String(admin.id));
  });

  it('verifies an email held in two accounts against the lowest account on the plain host, and each account on its subdomain host', async () => {
    const other = await ctx.createAccount();
    const twin = await ctx.createUser(other, 'agent', { email: admin.email, password: 'another-password' });
    const [{ subdomain }] = await ctx.db.sql<{ subdomain: string }>('SELECT subdomain FROM accounts WHERE id = $1', [String(other)]);
    // the plain host: the account with the lowest id holding the email, only
    const asAdmin = await ctx.graphql(ME, {}, { authorization: admin.basic });
    expect(asAdmin.json().data.me).toMatchObject({ id: String(admin.id), role: 'ADMIN' });
    const twinOnPlainHost = await ctx.graphql(ME, {}, { authorization: twin.basic });
    expect(twinOnPlainHost.statusCode).toBe(401);
    expect(twinOnPlainHost.json().errors[0]).toMatchObject({ message: "Couldn't authenticate you", extensions: { code: 'UNAUTHENTICATED' } });
    // the other account through its subdomain
    const asTwin = await ctx.graphql(ME, {}, { authorization: twin.basic, host: `${subdomain}.localhost` });
    expect(asTwin.json().data.me).toMatchObject({ id: String(twin.id), role: 'AGENT' });
    expect((await ctx.graphql(ME, {}, { authorization: admin.basic, host: `${subdomain}.localhost` })).statusCode).toBe(401);
  });

  it('never writes a token, a password or Basic credentials to the log', async () => {
    const { token } = await insertToken(ctx, admin);
    await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` });
    await ctx.graphql(ME, {}, { authorization: admin.basic });
    const all = ctx.logs.join('');
    expect(all).toContain('"url":"/graphql"');
    expect(all).not.toContain(token);
    expect(all).not.toContain(admin.password);
    expect(all).not.toContain(Buffer.from(`${admin.email}:${admin.password}`).toString('base64'));
  });
});
