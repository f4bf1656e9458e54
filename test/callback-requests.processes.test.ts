import { createDb } from '../src/db/create-db';
import { systemActor } from '../src/domain/audit/audit-log.repository';
import { createServices } from '../src/domain/services';
import { basicHeader, DEFAULT_LIMITS, TEST_HASH_KEY } from './helpers/test-app';
import { withPrisma, type TestDb } from './helpers/test-db';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { graphqlOverHttp, killAll, startServer, type ServerHandle } from './helpers/processes';

// The rate limit must hold across processes: two real servers on one PostgreSQL database.

const ADMIN_PASSWORD = 'two-process-admin-pw';
const PATH = '/api/v2/channels/voice/callback_requests';

describeOnPostgres('callback request rate limit across two server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: TestDb | undefined;
  const servers: ServerHandle[] = [];

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    // Started together: one migrates and creates the admin under the migration lock, the other waits.
    const env = { DATABASE_URL: database.url, ADMIN_PASSWORD, WEB_CONCURRENCY: '1' };
    servers.push(...(await Promise.all([startServer(env), startServer(env)])));
    db = withPrisma(await createDb({ databaseUrl: database.url, poolSize: 2 }));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await killAll();
    await db?.close();
    await database?.drop();
  }, 30_000);

  it('lets exactly 30 of 100 concurrent requests through, and not another account', async () => {
    // (what these fixtures store depends on no hash key)
    const { accounts, phoneNumbers: phones, users } = createServices({ db: db!, hashKey: TEST_HASH_KEY, limits: DEFAULT_LIMITS });
    const main = (await accounts.list()).find((a) => a.name === 'default')!;
    const mainPhone = await phones.create(systemActor(main.id), { number: '+12518717081', callbackEnabled: false });
    const second = await accounts.create('second');
    const secondPhone = await phones.create(systemActor(second.id), { number: '+12518717082', callbackEnabled: true });
    await users.create(systemActor(second.id), { name: 'agent', email: 'agent@second.example', password: 'second-agent-pw', role: 'agent' });
    const admin = basicHeader('admin@example.com', ADMIN_PASSWORD);
    const agent = basicHeader('agent@second.example', 'second-agent-pw');

    const create = (server: ServerHandle, authorization: string, phoneNumberId: bigint) =>
      fetch(`${server.url}${PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ callback_request: { phone_number_id: Number(phoneNumberId), requester_phone_number: '+4915123456789' } }),
      });
    // One Basic verification per process up front, so the burst measures the limit, not scrypt.
    for (const server of servers) expect((await graphqlOverHttp(server.url, '{ me { id } }', { authorization: admin })).status).toBe(200);

    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => create(servers[i % 2], admin, mainPhone.id)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(70);
    const remaining = responses.filter((r) => r.status === 201).map((r) => Number(r.headers.get('x-rate-limit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const refused = responses.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ error: 'TooManyRequests' });
    expect(await db!.prisma.callbackRequest.count({ where: { accountId: main.id } })).toBe(30);

    const other = await create(servers[1], agent, secondPhone.id);
    expect(other.status).toBe(201);
    expect(other.headers.get('x-rate-limit-remaining')).toBe('29');
  }, 60_000);
});
