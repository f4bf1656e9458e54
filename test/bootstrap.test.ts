import { bootstrapAdmin } from '../src/domain/directory/bootstrap';
import { killAll, processDatabase, startServer, type ServerHandle } from './helpers/processes';
import { createTestApp, basicHeader, type TestContext } from './helpers/test-app';

// docs/api.md, "Operations": when the database has no user at all, the server creates account
// "default" (if missing) and an admin in it, with ADMIN_PASSWORD or a random
// password shown once (on stderr, never in the log).

jest.setTimeout(120_000);

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

// The first start as an operator sees it: a real server process on a fresh database, at a
// log level that hides every log line (error, silent) and at the most talkative one (trace).
// The generated password is printed on stderr whatever the level, signs in, and is in no
// line of the JSON log (stdout); a second start on the same database prints none.
describe.each(['error', 'silent', 'trace'])('the first start with LOG_LEVEL=%s, a real server process', (level) => {
  let database: Awaited<ReturnType<typeof processDatabase>> | undefined;
  let env: Record<string, string>;
  let server: ServerHandle | undefined;
  let password: string;

  /** The password of the stderr block ("  password: …"), if the process printed one. */
  const printedPassword = (lines: string[]) => lines.map((l) => /^ {2}password: (\S+)$/.exec(l)?.[1]).find(Boolean);

  beforeAll(async () => {
    database = await processDatabase('bootstrap-process-');
    env = { ...database.env, LOG_LEVEL: level };
    // "listening on" is an info line: readiness from /readyz instead
    server = await startServer(env, { readyPath: '/readyz' });
  }, 120_000);
  afterAll(async () => {
    try {
      await killAll();
    } finally {
      await database?.remove();
    }
  });

  it('prints the admin\'s email and generated password on stderr, in a plain block', () => {
    const block = server!.stderr.join('\n');
    expect(block).toContain('First start: created account "default" and its first admin.');
    expect(block).toContain('  email:    admin@example.com');
    password = printedPassword(server!.stderr)!;
    expect(password).toMatch(/^[A-Za-z0-9_-]{16,}$/);
  });

  it('the printed password signs in (Basic, GET /api/v2/users/me.json → 200)', async () => {
    const res = await fetch(`${server!.url}/api/v2/users/me.json`, { headers: { authorization: basicHeader('admin@example.com', password) } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { user: { email: string; role: string } }).user).toMatchObject({ email: 'admin@example.com', role: 'admin' });
  });

  it('no line of the JSON log (stdout) holds the password, and every line of it is JSON', async () => {
    // the sign-in above is logged too (at info and below): still without the password
    await new Promise((r) => setTimeout(r, 200));
    expect(server!.stdout.filter((l) => l.includes(password))).toEqual([]);
    for (const line of server!.stdout.filter((l) => l.trim() !== '')) expect(() => JSON.parse(line)).not.toThrow();
    if (level === 'trace') expect(server!.stdout.join('\n')).toContain('its generated password is printed on stderr');
    else expect(server!.stdout.filter((l) => l.trim() !== '')).toEqual([]);
    // and stderr holds it once: in the block, nowhere else
    expect(server!.stderr.filter((l) => l.includes(password))).toEqual([`  password: ${password}`]);
  });

  it('a second start on the same database prints no password', async () => {
    expect(await server!.stop()).toBe(0);
    server = await startServer(env, { readyPath: '/readyz' });
    expect(printedPassword(server.stderr)).toBeUndefined();
    expect(server.stderr.join('\n')).not.toContain('First start');
    expect(await server.stop()).toBe(0);
  });
});
