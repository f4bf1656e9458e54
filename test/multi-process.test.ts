import { createDb } from '../src/db/create-db';
import { withPrisma, type TestDb } from './helpers/test-db';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { graphqlOverHttp, killAll, runCli, startServer, tempDir, type ServerHandle } from './helpers/processes';
import { basicHeader } from './helpers/test-app';

// docs/api.md, "Operations": several processes may serve one PostgreSQL database at once, and
// nothing that must be consistent lives in one process's memory.

jest.setTimeout(120_000);

const ADMIN = { email: 'admin@example.com', password: 'bootstrap-admin-pw' };
const ME = '{ me { email role } }';

describeOnPostgres('two server processes on one PostgreSQL database', () => {
  let data: ReturnType<typeof tempDir>;
  let url: string;
  let drop: () => Promise<void>;
  let db: TestDb;
  let a: ServerHandle;
  let b: ServerHandle;

  beforeAll(async () => {
    data = tempDir('multi-process-test-');
    ({ url, drop } = await freshPostgresDatabase());
  });
  afterAll(async () => {
    try {
      await killAll();
      await db?.close();
      await drop?.();
    } finally {
      data?.remove();
    }
  });

  it('both start at the same time on the empty database, and bootstrap exactly one admin', async () => {
    const env = { DATABASE_URL: url, DATA_DIR: data.path, ADMIN_PASSWORD: ADMIN.password };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);

    db = withPrisma(await createDb({ databaseUrl: url, poolSize: 2 }));
    const accounts = await db.prisma.account.findMany();
    expect(accounts.map((x) => x.name)).toEqual(['default']);
    const users = await db.prisma.user.findMany();
    expect(users.map((u) => [u.email, u.role])).toEqual([[ADMIN.email, 'admin']]);
    // exactly one of the two made it
    const created = [a, b].filter((s) => s.logs.some((l) => l.includes('created account')));
    expect(created).toHaveLength(1);

    for (const server of [a, b]) {
      const res = await graphqlOverHttp(server.url, ME, { authorization: basicHeader(ADMIN.email, ADMIN.password) });
      expect(res.body.data!.me).toEqual({ email: ADMIN.email, role: 'ADMIN' });
    }
  });

  it('shares the login throttle: 10 failures on A make the next attempt on B answer 429', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await graphqlOverHttp(a.url, ME, { authorization: basicHeader(ADMIN.email, `wrong-${i}`) });
      expect(res.status).toBe(401);
    }
    // B verified this very password a moment ago (and may cache that): still 429
    const res = await graphqlOverHttp(b.url, ME, { authorization: basicHeader(ADMIN.email, ADMIN.password) });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.body.errors![0].extensions!.code).toBe('RATE_LIMITED');
  });

  it('a user created with the CLI while both run can log in on both', async () => {
    const account = JSON.parse((await runCli(['account', 'create', '--name', 'acme'], { DATABASE_URL: url, DATA_DIR: data.path })).stdout);
    const created = await runCli(
      ['user', 'create', '--account', String(account.id), '--email', 'agent@acme.test', '--password', 'agent-password-1', '--role', 'agent'],
      { DATABASE_URL: url, DATA_DIR: data.path },
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    for (const server of [a, b]) {
      const res = await graphqlOverHttp(server.url, ME, { authorization: basicHeader('agent@acme.test', 'agent-password-1') });
      expect(res.status).toBe(200);
      expect(res.body.data!.me).toEqual({ email: 'agent@acme.test', role: 'AGENT' });
    }
  });

  it('both stop on SIGTERM with exit code 0', async () => {
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
  });
});
