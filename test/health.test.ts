import { buildApp, type App } from '../src/app';
import { createDb, type Db } from '../src/db/create-db';
import { migrate } from '../src/db/migrate';
import { createServices } from '../src/domain/services';
import { createTestApp, DEFAULT_LIMITS, TEST_HASH_KEY, basicHeader, type TestContext } from './helpers/test-app';
import { createTestDb, type TestDb } from './helpers/test-db';

// docs/api.md, "Overview and base URLs": GET /healthz (process up) and GET /readyz (database reachable,
// migrations applied).

const config = { hashKey: TEST_HASH_KEY, limits: DEFAULT_LIMITS, graphqlIntrospection: true, logLevel: 'silent' };

/** /readyz's queue when nothing waits (test apps run no engine: worker false) */
const IDLE_QUEUE = { worker: false, pending: 0, due: 0, running: 0, oldest_due_seconds: 0, dead: 0 };

describe('health endpoints', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(() => ctx.close());

  it('GET /healthz answers 200', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 ready on a migrated database, with the background queue', async () => {
    const res = await ctx.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    // no purge has run yet on this database
    expect(res.json()).toEqual({ status: 'ready', jobs: IDLE_QUEUE, retention: null });
  });

  it('GET /readyz shows jobs waiting and how long the oldest has waited', async () => {
    const account = await ctx.createAccount();
    await ctx.db.sql("INSERT INTO jobs (account_id, kind, run_at) VALUES ($1, 'readyz-check', now() - interval '42 seconds'), ($1, 'readyz-later', now() + interval '1 hour')", [String(account)]);
    await ctx.db.sql("INSERT INTO jobs (account_id, kind, dead_at) VALUES ($1, 'readyz-dead', now())", [String(account)]);
    try {
      const res = await ctx.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      const { jobs } = res.json();
      expect(jobs).toEqual({ ...IDLE_QUEUE, pending: 2, due: 1, oldest_due_seconds: expect.any(Number), dead: 1 });
      expect(jobs.oldest_due_seconds).toBeGreaterThanOrEqual(42);
      expect(jobs.oldest_due_seconds).toBeLessThan(60);
    } finally {
      await ctx.db.sql("DELETE FROM jobs WHERE kind LIKE 'readyz-%'");
    }
  });

  it('GET /readyz shows the last retention purge, whatever process ran it, and when the next is due (docs/api.md, "Retention")', async () => {
    await ctx.db.sql("INSERT INTO rate_window_hits (key, created_at, expires_at) VALUES ('readyz:old', now() - interval '1 hour', now() - interval '55 minutes')");
    await ctx.db.sql("INSERT INTO jobs (kind, key, run_at) VALUES ('retention.purge', 'recurring', now() + interval '10 minutes')");
    // another process's purge (the CLI's, a worker's): its figures are in the database
    const report = await createServices({ db: ctx.db, ...config }).retention.run();
    try {
      const res = await ctx.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      const { retention } = res.json();
      expect(retention).toEqual({
        last_run_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), duration_ms: Math.round(report.durationMs),
        removed: { ...report.removed, rate_window_hits: 1 }, next_run_at: expect.any(String),
      });
      expect(Date.now() - Date.parse(retention.last_run_at)).toBeLessThan(60_000);
      expect(Date.parse(retention.next_run_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    } finally {
      await ctx.db.sql("DELETE FROM jobs WHERE kind = 'retention.purge'");
    }
  });
});

describe('readiness when the database is unreachable', () => {
  let db: Db;
  let app: App;

  beforeAll(async () => {
    // Nothing listens on port 1: a real connection failure.
    db = await createDb({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none', poolSize: 2 });
    app = await buildApp({ db, services: createServices({ db, ...config }), config, logger: false });
    await app.fastify.ready();
  });
  afterAll(async () => {
    await app.fastify.close();
    await db.close();
  });

  it('/readyz answers 503 quickly instead of hanging', async () => {
    const started = Date.now();
    const res = await app.fastify.inject({ method: 'GET', url: '/readyz' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'unavailable', reason: 'database unreachable' });
  });

  it('/healthz still answers 200: the process is up', async () => {
    const res = await app.fastify.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
  });

  it('a request that needs the database fails quickly with SERVICE_UNAVAILABLE, without internals', async () => {
    const started = Date.now();
    const res = await app.fastify.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', authorization: basicHeader('someone@example.com', 'a-password') },
      payload: { query: '{ me { id } }' },
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(res.statusCode).toBe(503);
    expect(res.json().errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.body).not.toContain('ECONNREFUSED');
    expect(res.body).not.toContain('at /');
  });

  it('a Bearer request on GraphQL answers 503 too', async () => {
    const res = await app.fastify.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', authorization: 'Bearer abcdefghijklmnopqrstuvwxyz0123456789' },
      payload: { query: '{ currentOAuthToken { id } }' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().errors[0]).toMatchObject({ message: 'The service is temporarily unavailable', extensions: { code: 'SERVICE_UNAVAILABLE' } });
  });

  it('a REST request answers 503 with the JSON envelope', async () => {
    const res = await app.fastify.inject({
      method: 'GET',
      url: '/api/v2/oauth/clients.json',
      headers: { authorization: basicHeader('someone@example.com', 'a-password') },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ error: 'ServiceUnavailable' });
    expect(res.body).not.toContain('ECONNREFUSED');
  });
});

describe('readiness before migrations', () => {
  let db: TestDb;
  let app: App;

  beforeAll(async () => {
    db = await createTestDb({ migrate: false });
    app = await buildApp({ db, services: createServices({ db, ...config }), config, logger: false });
    await app.fastify.ready();
  });
  afterAll(async () => {
    await app.fastify.close();
    await db.close();
  });

  it('/readyz answers 503 "migrations pending", then 200 once migrated', async () => {
    const pending = await app.fastify.inject({ method: 'GET', url: '/readyz' });
    expect(pending.statusCode).toBe(503);
    expect(pending.json()).toEqual({ status: 'unavailable', reason: 'migrations pending' });

    await migrate(db);
    const ready = await app.fastify.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', jobs: IDLE_QUEUE, retention: null });
  });
});
