import { bootstrapAdmin } from '../src/domain/directory/bootstrap';
import { createTestApp, basicHeader, type TestContext } from './helpers/test-app';

// docs/api.md, "Operations": when the database has no user at all, the server creates account
// "default" (if missing) and an admin in it, with ADMIN_PASSWORD or a random
// password shown once.

const ME = '{ me { email role account { name } } }';

describe('bootstrapAdmin on an empty database', () => {
  let ctx: TestContext;
  let generated: string;

  beforeAll(async () => {
    ctx = await createTestApp(); // migrated, and empty
  });
  afterAll(() => ctx.close());

  it('creates account "default" with one admin and returns a generated password', async () => {
    const result = await bootstrapAdmin(ctx.app.services, { email: 'root@example.com' });
    expect(result).toEqual({ created: true, email: 'root@example.com', generatedPassword: expect.any(String) });
    generated = result.generatedPassword!;
    expect(generated.length).toBeGreaterThanOrEqual(16);

    const accounts = await ctx.db.prisma.account.findMany();
    expect(accounts.map((a) => a.name)).toEqual(['default']);
    const users = await ctx.db.prisma.user.findMany();
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ accountId: accounts[0].id, email: 'root@example.com', role: 'admin', active: true });
    // stored as a scrypt hash, never as the password itself
    expect(users[0].passwordHash).toMatch(/^scrypt\$/);
    expect(users[0].passwordHash).not.toContain(generated);
    // both changes are the system's own, in the audit log
    const audit = await ctx.db.sql<{ action: string; source_type: string; actor_id: string | null; actor_name: string; via: string }>(
      'SELECT action, source_type, actor_id, actor_name, via FROM audit_logs ORDER BY id',
    );
    expect(audit).toEqual([
      { action: 'create', source_type: 'account', actor_id: null, actor_name: 'System', via: 'system' },
      { action: 'create', source_type: 'user', actor_id: null, actor_name: 'System', via: 'system' },
    ]);
  });

  it('the generated password logs in (Basic auth, me)', async () => {
    const res = await ctx.graphql(ME, {}, { authorization: basicHeader('root@example.com', generated) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.me).toEqual({ email: 'root@example.com', role: 'ADMIN', account: { name: 'default' } });
  });

  it('creates nothing the second time', async () => {
    const result = await bootstrapAdmin(ctx.app.services, { email: 'another@example.com' });
    expect(result).toEqual({ created: false });
    expect(await ctx.db.prisma.account.count()).toBe(1);
    expect(await ctx.db.prisma.user.count()).toBe(1);
    expect(await ctx.db.prisma.user.count({ where: { email: 'another@example.com' } })).toBe(0);
  });
});

describe('bootstrapAdmin with a password given', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(() => ctx.close());

  it('uses it, returns no generated password, and reuses an existing "default" account', async () => {
    const existing = await ctx.createAccount('default');
    const result = await bootstrapAdmin(ctx.app.services, { email: 'admin@example.com', password: 'chosen-password-1' });
    expect(result.created).toBe(true);
    expect(result.generatedPassword).toBeUndefined();

    expect(await ctx.db.prisma.account.count()).toBe(1);
    const admin = await ctx.db.prisma.user.findFirstOrThrow();
    expect(admin).toMatchObject({ accountId: existing, role: 'admin' });

    const res = await ctx.graphql(ME, {}, { authorization: basicHeader('admin@example.com', 'chosen-password-1') });
    expect(res.json().data.me).toEqual({ email: 'admin@example.com', role: 'ADMIN', account: { name: 'default' } });
  });
});
