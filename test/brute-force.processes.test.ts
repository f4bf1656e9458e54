import { createDb, type Db } from '../src/db/create-db';
import { loginAddressKey, loginEmailKey } from '../src/domain/auth/login-keys';
import { systemActor } from '../src/domain/audit/audit-log.repository';
import type { AccountService } from '../src/domain/directory/account.service';
import { createServices, type Services } from '../src/domain/services';
import { basicHeader, createTestApp, DEFAULT_LIMITS, TEST_HASH_KEY, type TestContext } from './helpers/test-app';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { graphqlOverHttp, killAll, startServer, type ServerHandle } from './helpers/processes';

// docs/api.md, "Authentication" across processes: after 10 failed Basic attempts for one email in
// the window, every further attempt on ANY process answers 429 with Retry-After,
// even with the right password. Concurrent attempts cannot get past the limit:
// each full verification is counted before it runs, under a per-email lock in
// the database. Attempts that left the window are deleted as new ones come.
// The failures are hits of rolling windows (rate_window_take): one keyed by an
// HMAC of the email, one by an HMAC of the client address (the servers here run
// with the default per-address limit, 50: every request comes from 127.0.0.1).

jest.setTimeout(120_000);

const ME = '{ me { email } }';
const WINDOW = 300;
const PASSWORD = 'the-right-password';
// the servers' HASH_KEY, so that the test can name the throttle's keys
const SERVER_HASH_KEY = 'brute-force-processes-hash-key-0123456789';
const emailKey = (accountId: bigint, email: string) => loginEmailKey(Buffer.from(SERVER_HASH_KEY, 'utf8'), accountId, email);

type Reply = Awaited<ReturnType<typeof graphqlOverHttp>>;

function expectThrottled(res: Reply): number {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW);
  expect(res.body.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfter });
  return retryAfter;
}

async function failureRows(db: Db, accountId: bigint, email: string): Promise<number> {
  const [row] = await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM rate_window_hits WHERE key = $1', [emailKey(accountId, email)]);
  return row.n;
}

describeOnPostgres('login throttle across two server processes on one database', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: Db | undefined;
  let servers: ServerHandle[] = [];
  let services: Services | undefined;
  let directory: AccountService;
  let accountId: bigint;

  const attempt = (server: ServerHandle, email: string, password: string) => graphqlOverHttp(server.url, ME, { authorization: basicHeader(email, password) });
  const newUser = async (email: string) => {
    await services!.users.create(systemActor(accountId), { name: email, email, password: PASSWORD, role: 'agent' });
    return email;
  };

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    const env = { DATABASE_URL: database.url, ADMIN_PASSWORD: 'bootstrap-admin-pw', WEB_CONCURRENCY: '1', HASH_KEY: SERVER_HASH_KEY };
    servers = await Promise.all([startServer(env), startServer(env)]);
    db = await createDb({ databaseUrl: database.url, poolSize: 2 });
    services = createServices({ db, hashKey: Buffer.from(SERVER_HASH_KEY, 'utf8'), limits: DEFAULT_LIMITS });
    directory = services.accounts;
    accountId = (await directory.list()).find((a) => a.name === 'default')!.id;
  }, 90_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await killAll();
    await db?.close();
    await database?.drop();
  }, 30_000);

  it('counts failures on both processes together: the 11th attempt, on either, is 429 even with the right password', async () => {
    const [a, b] = servers;
    const email = await newUser('split@example.com');
    // Both processes have verified (and may cache) the right password before.
    for (const server of servers) expect((await attempt(server, email, PASSWORD)).body.data!.me.email).toBe(email);

    for (let i = 0; i < 10; i++) expect((await attempt(servers[i % 2], email, `wrong-${i}`)).status).toBe(401);
    expect(await failureRows(db!, accountId, email)).toBe(10);

    const onA = expectThrottled(await attempt(a, email, PASSWORD));
    const onB = expectThrottled(await attempt(b, email, PASSWORD));
    // one clock (the database's): both name the same moment
    expect(Math.abs(onA - onB)).toBeLessThanOrEqual(2);

    // Switching process does not help, and refused attempts are not counted.
    for (let i = 0; i < 6; i++) expectThrottled(await attempt(servers[i % 2], email, i % 3 ? PASSWORD : `wrong-again-${i}`));
    expect(await failureRows(db!, accountId, email)).toBe(10);
  });

  it('lets at most 10 of 30 concurrent wrong attempts over both processes be tried; the other 20 get 429 without an answer', async () => {
    const email = await newUser('burst@example.com');
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(servers[i % 2], email, `guess-${i}`)));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    for (const reply of replies.filter((r) => r.status === 429)) expectThrottled(reply);
    expect(await failureRows(db!, accountId, email)).toBe(10);

    for (const server of servers) expectThrottled(await attempt(server, email, PASSWORD));
    expect(await failureRows(db!, accountId, email)).toBe(10);
  });

  it('deletes attempts that left the window: the email’s own, and the oldest of any key', async () => {
    const email = await newUser('prune@example.com');
    await db!.sql(
      `INSERT INTO rate_window_hits (id, key, created_at, expires_at)
       SELECT -1000 + g, CASE WHEN g <= 25 THEN 'login-email:sprayed-' || g ELSE $1 END, now() - interval '1 hour', now() - interval '55 minutes'
         FROM generate_series(1, 40) AS g`,
      [emailKey(accountId, email)],
    );
    const expired = async () => (await db!.sql<{ n: number }>(`SELECT count(*)::int AS n FROM rate_window_hits WHERE created_at < now() - interval '30 minutes'`))[0].n;
    expect(await expired()).toBe(40);
    const fresh = await db!.sql<{ n: number }>('SELECT count(*)::int AS n FROM rate_window_hits');

    expect((await attempt(servers[0], email, 'wrong')).status).toBe(401);
    // its 15 expired attempts are gone, 20 of the 25 sprayed ones too (the 10 oldest
    // expired at each of the attempt's two takes: the address's window, then the
    // email's), and the new failure counted
    expect(await failureRows(db!, accountId, email)).toBe(1);
    expect(await expired()).toBe(5);
    expect((await attempt(servers[1], 'someone-else@example.com', 'wrong')).status).toBe(401);
    expect(await expired()).toBe(0);
    expect((await attempt(servers[0], 'someone-else@example.com', 'wrong')).status).toBe(401);
    // nothing inside the window was touched: the earlier tests' failures are all still
    // there, and each of the 3 failures added one hit to its email's window and one to
    // the address's
    const [after] = await db!.sql<{ n: number }>('SELECT count(*)::int AS n FROM rate_window_hits');
    expect(after.n).toBe(fresh[0].n - 40 + 3 * 2);
    const [address] = await db!.sql<{ n: number }>('SELECT count(*)::int AS n FROM rate_window_hits WHERE key = $1', [
      loginAddressKey(Buffer.from(SERVER_HASH_KEY, 'utf8'), '127.0.0.1'),
    ]);
    // every failure of this file, none of its successes or refused attempts: 10 + 10 + 3
    expect(address.n).toBe(23);
  });
});

// The same pruning on the embedded database (one process), so both engines run it.
describe('login throttle bookkeeping on this test database', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(() => ctx.close());

  it('deletes expired attempts of the failing email and the oldest expired ones of others, never recent ones', async () => {
    const user = await ctx.createUser(await ctx.createAccount(), 'agent', { password: PASSWORD });
    const key = loginEmailKey(TEST_HASH_KEY, user.accountId, user.email);
    await ctx.db.sql(
      `INSERT INTO rate_window_hits (id, key, created_at, expires_at)
       SELECT -100 + g, CASE WHEN g <= 12 THEN 'login-email:old-' || g ELSE $1 END, now() - interval '1 hour', now() - interval '55 minutes'
         FROM generate_series(1, 20) AS g`,
      [key],
    );
    await ctx.db.sql(`INSERT INTO rate_window_hits (key, created_at, expires_at) VALUES ('login-email:recent', now() - interval '1 minute', now() + interval '4 minutes')`);

    const res = await ctx.graphql(ME, {}, { authorization: basicHeader(user.email, 'wrong') });
    expect(res.statusCode).toBe(401);
    const rows = await ctx.db.sql<{ key: string }>('SELECT key FROM rate_window_hits ORDER BY id');
    expect(rows.map((r) => r.key)).toEqual(['login-email:old-11', 'login-email:old-12', 'login-email:recent', key]);
  });

  it('counts from zero: with a limit of 1 the first wrong attempt is answered, the next is not', async () => {
    const strict = await createTestApp({ limits: { loginFailures: 1 } });
    try {
      const user = await strict.createUser(await strict.createAccount(), 'agent', { password: PASSWORD });
      expect((await strict.graphql(ME, {}, { authorization: basicHeader(user.email, 'wrong') })).statusCode).toBe(401);
      const res = await strict.graphql(ME, {}, { authorization: user.basic });
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await strict.close();
    }
  });
});
