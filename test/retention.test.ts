import { TenantSql } from '../src/db/tenant-sql';
import { repositories } from '../src/domain/repositories';
import { RANGE_START, RETENTION_TABLES, type RetentionTable } from '../src/domain/retention/retention.repository';
import { createServices } from '../src/domain/services';
import { RETENTION_DEFAULTS, RETENTION_JOB, type RetentionSettings } from '../src/domain/retention/retention-settings';
import { createJobEngine } from '../src/jobs/kinds';
import { DEFAULT_LIMITS, TEST_HASH_KEY } from './helpers/test-app';
import { createTestDb, type TestDb } from './helpers/test-db';
import { describeOnPostgres } from './helpers/postgres';
import {
  idsOf, insertAudit, insertCallback, insertCode, insertEvent, insertGrant, insertInvocation, insertJob, insertRateHit, insertSecret, insertToken,
  insertTokenCount, seedRetentionBase, type RetentionBase,
  insertSession,
} from './helpers/retention-fixtures';

// docs/api.md, "Retention": what the purge removes, table by table, and how it runs
// (batches, pauses, the signal, dry runs, the recurring job and its one runner).

const S = 1000;
const H = 3600 * S;
const D = 24 * H;
const SETTINGS: RetentionSettings = { ...RETENTION_DEFAULTS, pauseMs: 0 };

const servicesOn = (db: TestDb, settings: Partial<RetentionSettings> = {}) =>
  createServices({ db, hashKey: TEST_HASH_KEY, limits: DEFAULT_LIMITS, retention: { ...SETTINGS, ...settings } });

async function dbNow(db: TestDb): Promise<Date> {
  return (await db.sql<{ now: Date }>('SELECT now() AS now'))[0].now;
}

async function count(db: TestDb, table: string): Promise<number> {
  return (await db.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
}

/** Rows of every table, some over past their retention (gone), some not (kept), around `now`. */
async function seedAroundNow(db: TestDb, b: RetentionBase, now: Date) {
  const at = (ms: number) => new Date(now.getTime() + ms);
  const sql = db.sql;
  const gone: Record<string, string[]> = {};
  const kept: Record<string, string[]> = {};
  const add = (into: Record<string, string[]>, table: string, id: string) => (into[table] ??= []).push(id);

  // grants first (codes and tokens belong to them)
  const liveGrant = await insertGrant(sql, b, { createdAt: at(-3 * D) });
  add(kept, 'oauth_grants', liveGrant);
  add(gone, 'oauth_grants', await insertGrant(sql, b, { createdAt: at(-3 * D), revokedAt: at(-D - S) }));
  add(kept, 'oauth_grants', await insertGrant(sql, b, { createdAt: at(-3 * D), revokedAt: at(-D + S) }));
  // not revoked, but nothing can come of it: its code used, its only token over for more than a day
  const deadGrant = await insertGrant(sql, b, { createdAt: at(-3 * D) });
  add(gone, 'oauth_grants', deadGrant);
  // not revoked, its code expired unused 3 days ago, no token
  const unusedGrant = await insertGrant(sql, b, { createdAt: at(-3 * D) });
  add(gone, 'oauth_grants', unusedGrant);
  // just consented: its code is still usable
  const freshGrant = await insertGrant(sql, b, { createdAt: at(-S) });
  add(kept, 'oauth_grants', freshGrant);

  // codes: used or expired for more than an hour
  add(gone, 'oauth_authorization_codes', await insertCode(sql, b, liveGrant, { expiresAt: at(-H + 60 * S), usedAt: at(-H - S) }));
  add(gone, 'oauth_authorization_codes', await insertCode(sql, b, deadGrant, { expiresAt: at(-3 * D + 120 * S), usedAt: at(-3 * D + 10 * S) }));
  add(gone, 'oauth_authorization_codes', await insertCode(sql, b, unusedGrant, { expiresAt: at(-3 * D + 120 * S) }));
  add(kept, 'oauth_authorization_codes', await insertCode(sql, b, liveGrant, { expiresAt: at(-H) }));
  add(kept, 'oauth_authorization_codes', await insertCode(sql, b, liveGrant, { expiresAt: at(-30 * S), usedAt: at(-30 * 60 * S) }));
  add(kept, 'oauth_authorization_codes', await insertCode(sql, b, freshGrant, { expiresAt: at(119 * S) }));

  // tokens: revoked, or access and refresh token expired, for more than 7 days
  const token = async (into: Record<string, string[]>, t: Parameters<typeof insertToken>[2]) => add(into, 'oauth_tokens', (await insertToken(sql, b, t)).id);
  await token(gone, { revokedAt: at(-7 * D - S), expiresAt: at(D) });
  await token(kept, { revokedAt: at(-7 * D + S), expiresAt: at(D) });
  // revoked lately, but expired long before: over since it expired
  await token(gone, { revokedAt: at(-H), expiresAt: at(-8 * D) });
  await token(kept, {});
  await token(gone, { expiresAt: at(-7 * D - S) });
  // the access token expired long ago, its refresh token is still valid: alive
  await token(kept, { expiresAt: at(-30 * D), refreshExpiresAt: at(10 * D), grantId: liveGrant });
  await token(gone, { expiresAt: at(-9 * D), refreshExpiresAt: at(-7 * D - S) });
  await token(kept, { expiresAt: at(-9 * D), refreshExpiresAt: at(-6 * D) });
  // no expiry, not revoked: never over, whatever its refresh token says
  await token(kept, { refreshExpiresAt: at(-30 * D) });
  // the dead grant's token: over for two days, kept (7 days), its grant_id set NULL with the grant
  const orphan = await insertToken(sql, b, { expiresAt: at(-2 * D - H), refreshExpiresAt: at(-2 * D), grantId: deadGrant });
  add(kept, 'oauth_tokens', orphan.id);

  // secrets: grace over for more than a day; the current one (no expiry) stays
  add(gone, 'oauth_client_secrets', await insertSecret(sql, b, at(-D - S)));
  add(kept, 'oauth_client_secrets', await insertSecret(sql, b, at(-D + S)));
  add(kept, 'oauth_client_secrets', await insertSecret(sql, b, null));

  // counters of ended buckets; rolling-window hits expired
  await insertTokenCount(sql, b, at(-60 * S), 0);
  await insertTokenCount(sql, b, at(10 * 60 * S), 0);
  add(gone, 'rate_window_hits', await insertRateHit(sql, at(-S)));
  add(kept, 'rate_window_hits', await insertRateHit(sql, at(60 * S)));

  // events and invocations: 7 days; an event an unfinished invocation will send again is kept
  const lonelyEvent = await insertEvent(sql, b, at(-8 * D));
  add(gone, 'events', lonelyEvent);
  const awaitedEvent = await insertEvent(sql, b, at(-8 * D));
  add(kept, 'events', awaitedEvent);
  const sentEvent = await insertEvent(sql, b, at(-8 * D));
  add(gone, 'events', sentEvent);
  add(kept, 'events', await insertEvent(sql, b, at(-7 * D + S)));
  add(gone, 'webhook_invocations', await insertInvocation(sql, b, { eventId: sentEvent, status: 'success', createdAt: at(-8 * D), completedAt: at(-7 * D - S) }));
  add(gone, 'webhook_invocations', await insertInvocation(sql, b, { status: 'failed', createdAt: at(-9 * D), completedAt: at(-8 * D) }));
  add(kept, 'webhook_invocations', await insertInvocation(sql, b, { status: 'success', createdAt: at(-8 * D), completedAt: at(-7 * D + S) }));
  add(kept, 'webhook_invocations', await insertInvocation(sql, b, { eventId: awaitedEvent, status: 'retrying', createdAt: at(-8 * D), completedAt: null }));

  // dead jobs: 7 days; pending ones are the engine's
  add(gone, 'jobs', await insertJob(sql, { deadAt: at(-7 * D - S) }));
  add(kept, 'jobs', await insertJob(sql, { deadAt: at(-7 * D + S) }));
  add(kept, 'jobs', await insertJob(sql, { deadAt: null, createdAt: at(-30 * D) }));

  // audit records: 400 days
  add(gone, 'audit_logs', await insertAudit(sql, b, at(-400 * D - S)));
  add(kept, 'audit_logs', await insertAudit(sql, b, at(-400 * D + S)));

  // finished callback requests: 90 days after they finished (else their last change, else their creation)
  add(gone, 'callback_requests', await insertCallback(sql, b, { status: 'completed', createdAt: at(-100 * D), updatedAt: at(-80 * D), completedAt: at(-90 * D - S) }));
  add(kept, 'callback_requests', await insertCallback(sql, b, { status: 'completed', createdAt: at(-100 * D), completedAt: at(-90 * D + S) }));
  add(gone, 'callback_requests', await insertCallback(sql, b, { status: 'failed', createdAt: at(-100 * D), updatedAt: at(-91 * D) }));
  add(gone, 'callback_requests', await insertCallback(sql, b, { status: 'cancelled', createdAt: at(-91 * D) }));
  add(kept, 'callback_requests', await insertCallback(sql, b, { status: 'queued', createdAt: at(-200 * D) }));
  add(kept, 'callback_requests', await insertCallback(sql, b, { status: 'dialing', createdAt: at(-200 * D), updatedAt: at(-199 * D) }));

  // sign-in sessions: gone once expired or signed out
  add(gone, 'oauth_sessions', await insertSession(sql, b, { expiresAt: at(-S) }));
  add(gone, 'oauth_sessions', await insertSession(sql, b, { expiresAt: at(10 * 60 * S), endedAt: at(-S) }));
  add(kept, 'oauth_sessions', await insertSession(sql, b, { expiresAt: at(10 * 60 * S) }));
  return { gone, kept, orphan: orphan.id, deadGrant };
}

/** Per table, what seedAroundNow expects removed (the codes of removed grants go with them, uncounted). */
const EXPECTED_REMOVED = {
  oauth_authorization_codes: 3, oauth_tokens: 4, oauth_grants: 3, oauth_client_secrets: 1, oauth_client_token_counts: 1, rate_window_hits: 1,
  webhook_invocations: 2, events: 2, jobs: 1, audit_logs: 1, callback_requests: 3,
  oauth_sessions: 2,
};

describe('retention purge (docs/api.md, "Retention")', () => {
  let db: TestDb;
  beforeEach(async () => {
    db = await createTestDb();
  });
  afterEach(() => db.close());

  it('removes exactly what is over past its retention, in every table, and nothing alive', async () => {
    const now = await dbNow(db);
    const b = await seedRetentionBase(db.sql, 'rules');
    const { gone, kept, orphan, deadGrant } = await seedAroundNow(db, b, now);
    const report = await servicesOn(db).retention.run({ now });
    expect(report).toEqual({ removed: EXPECTED_REMOVED, durationMs: expect.any(Number), dryRun: false, stopped: false });
    for (const [table, ids] of Object.entries(kept)) {
      const left = await idsOf(db.sql, table);
      expect({ table, missing: ids.filter((id) => !left.includes(id)) }).toEqual({ table, missing: [] });
    }
    for (const [table, ids] of Object.entries(gone)) {
      const left = await idsOf(db.sql, table);
      expect({ table, left: ids.filter((id) => left.includes(id)) }).toEqual({ table, left: [] });
    }
    // the removed grant's token stays (its own retention), no longer in a family
    expect(await db.sql('SELECT grant_id FROM oauth_tokens WHERE id = $1', [orphan])).toEqual([{ grant_id: null }]);
    expect(await db.sql('SELECT id FROM oauth_authorization_codes WHERE grant_id = $1', [deadGrant])).toEqual([]);
    // attempts and history went with their invocations and requests
    expect(await count(db, 'webhook_invocation_attempts')).toBe(2);
    expect(await count(db, 'callback_request_history')).toBe(3);
    expect(await db.sql<{ ends_at: Date }>('SELECT ends_at FROM oauth_client_token_counts')).toEqual([{ ends_at: new Date(now.getTime() + 10 * 60 * S) }]);

    // a second run finds nothing more
    expect((await servicesOn(db).retention.run({ now })).removed).toEqual(Object.fromEntries(Object.keys(EXPECTED_REMOVED).map((t) => [t, 0])));
  });

  it('a dry run counts what a run would remove, and removes and stores nothing', async () => {
    const now = await dbNow(db);
    const b = await seedRetentionBase(db.sql, 'dry');
    await seedAroundNow(db, b, now);
    const tables = [...Object.keys(EXPECTED_REMOVED), 'webhook_invocation_attempts', 'callback_request_history'];
    const before = await Promise.all(tables.map((t) => count(db, t)));
    const retention = servicesOn(db).retention;
    const dry = await retention.run({ now, dryRun: true });
    expect(dry).toEqual({ removed: EXPECTED_REMOVED, durationMs: expect.any(Number), dryRun: true, stopped: false });
    expect(await Promise.all(tables.map((t) => count(db, t)))).toEqual(before);
    expect(await retention.lastRun()).toBeNull();
    expect((await retention.run({ now })).removed).toEqual(dry.removed);
  });

  it('AUDIT_RETENTION_DAYS=0 and CALLBACK_RETENTION_DAYS=0 keep audit records and callback requests forever', async () => {
    const now = await dbNow(db);
    const b = await seedRetentionBase(db.sql, 'forever');
    const audit = await insertAudit(db.sql, b, new Date(now.getTime() - 5000 * D));
    const request = await insertCallback(db.sql, b, { status: 'completed', createdAt: new Date(now.getTime() - 5000 * D), completedAt: new Date(now.getTime() - 4999 * D) });
    const report = await servicesOn(db, { auditDays: 0, callbackDays: 0 }).retention.run({ now });
    expect(report.removed).toMatchObject({ audit_logs: 0, callback_requests: 0 });
    expect(await idsOf(db.sql, 'audit_logs')).toContain(audit);
    expect(await idsOf(db.sql, 'callback_requests')).toEqual([request]);
    // with the defaults, the same rows are over
    expect((await servicesOn(db).retention.run({ now })).removed).toMatchObject({ audit_logs: 1, callback_requests: 1 });
  });

  it('keeps an event whose fan-out job has not run yet, and every later one, until the job is done', async () => {
    const now = await dbNow(db);
    const b = await seedRetentionBase(db.sql, 'fanout');
    const older = await insertEvent(db.sql, b, new Date(now.getTime() - 10 * D));
    const waiting = await insertEvent(db.sql, b, new Date(now.getTime() - 9 * D));
    const later = await insertEvent(db.sql, b, new Date(now.getTime() - 8 * D));
    // the job written in the event's transaction carries the same now()
    const job = await insertJob(db.sql, { kind: 'event.published', deadAt: null, createdAt: new Date(now.getTime() - 9 * D), payload: { event_id: waiting } });
    const retention = servicesOn(db).retention;
    expect((await retention.run({ now })).removed.events).toBe(1);
    expect(await idsOf(db.sql, 'events')).toEqual([waiting, later].sort());
    expect(await idsOf(db.sql, 'events')).not.toContain(older);
    // the job done (deleted by the engine), both go
    await db.sql('DELETE FROM jobs WHERE id = $1', [job]);
    expect((await retention.run({ now })).removed.events).toBe(2);
  });

  it('deletes in batches of RETENTION_BATCH_SIZE, stops at the signal between two batches, and the next run finishes', async () => {
    const now = await dbNow(db);
    for (let i = 0; i < 35; i++) await insertRateHit(db.sql, new Date(now.getTime() - (i + 1) * S));
    // a long pause after each batch: the signal comes during the first one
    const retention = servicesOn(db, { batchSize: 10, pauseMs: 60_000 }).retention;
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 300);
    const started = Date.now();
    const first = await retention.run({ now, signal: stop.signal });
    clearTimeout(timer);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(first).toMatchObject({ stopped: true, dryRun: false });
    expect(first.removed.rate_window_hits).toBe(10);
    // the oldest first (the index's order)
    expect((await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM rate_window_hits WHERE expires_at < $1', [new Date(now.getTime() - 25 * S)]))[0].n).toBe(0);
    expect(await count(db, 'rate_window_hits')).toBe(25);
    // a stopped run is stored (its rows are gone); the next one goes on from there, batch by batch
    expect((await retention.lastRun())?.removed.rate_window_hits).toBe(10);
    const statements = db.statementCount();
    const second = await servicesOn(db, { batchSize: 10 }).retention.run({ now });
    expect(second).toMatchObject({ stopped: false });
    expect(second.removed.rate_window_hits).toBe(25);
    // 3 batches for the hits (10, 10, 5), one for each other table, and the stored run
    expect(db.statementCount() - statements).toBe(3 + (RETENTION_TABLES.length - 1) + 1);
    expect(await count(db, 'rate_window_hits')).toBe(0);
    // a signal that has fired before the run: it removes nothing
    expect((await retention.run({ now, signal: AbortSignal.abort() })).stopped).toBe(true);
  });

  it('lastRun: null before the first run, then the last real run of any process, with the recurring job\'s next run; 100 runs kept', async () => {
    const retention = servicesOn(db).retention;
    expect(await retention.lastRun()).toBeNull();
    const report = await retention.run();
    const last = await retention.lastRun();
    expect(last).toEqual({ startedAt: expect.any(Date), finishedAt: expect.any(Date), durationMs: Math.round(report.durationMs), removed: report.removed, nextRunAt: null });
    expect(last!.finishedAt.getTime()).toBeGreaterThanOrEqual(last!.startedAt.getTime());
    await db.sql("INSERT INTO jobs (kind, key, run_at) VALUES ($1, 'recurring', now() + interval '10 minutes')", [RETENTION_JOB]);
    const next = (await retention.lastRun())!.nextRunAt!;
    expect(next.getTime() - Date.now()).toBeGreaterThan(9 * 60 * S);
    for (let i = 0; i < 105; i++) await retention.run();
    expect(await count(db, 'retention_runs')).toBeLessThanOrEqual(100);
    expect(await count(db, 'retention_runs')).toBeGreaterThanOrEqual(99);
  });
});

describe('the recurring job retention.purge', () => {
  let db: TestDb;
  beforeEach(async () => {
    db = await createTestDb();
  });
  afterEach(() => db.close());

  const jobRow = async () =>
    (await db.sql<{ run_at: Date; locked_by: string | null; attempts: number }>("SELECT run_at, locked_by, attempts FROM jobs WHERE kind = $1 AND key = 'recurring'", [RETENTION_JOB]))[0];

  it('stops at SIGTERM (the engine stopping) after its batch, is given back at once, and the next engine finishes the purge', async () => {
    const now = await dbNow(db);
    for (let i = 0; i < 35; i++) await insertRateHit(db.sql, new Date(now.getTime() - (i + 1) * S));
    const logs: unknown[] = [];
    const log = { info: (o: object, m: string) => logs.push({ ...o, msg: m }), warn: () => {}, error: () => {} };
    const slow = createJobEngine(db, servicesOn(db, { batchSize: 10, pauseMs: 60_000 }), { log });
    await slow.start();
    await waitFor(async () => (await count(db, 'rate_window_hits')) === 25);
    const stopping = Date.now();
    await slow.stop();
    expect(Date.now() - stopping).toBeLessThan(5000);
    expect(await count(db, 'rate_window_hits')).toBe(25);
    // given back: due now, held by nobody, the attempt not counted
    const row = await jobRow();
    expect(row).toMatchObject({ locked_by: null, attempts: 0 });
    expect(row.run_at.getTime()).toBeLessThanOrEqual(Date.now());
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'retention: purge run', stopped: true, total: 10 }));

    const next = createJobEngine(db, servicesOn(db, { batchSize: 10, intervalSeconds: 600 }), { log });
    await next.start();
    try {
      await waitFor(async () => (await count(db, 'rate_window_hits')) === 0);
      // done: due again a whole interval later
      await waitFor(async () => (await jobRow()).run_at.getTime() > Date.now() + 500 * S);
      expect(logs).toContainEqual(expect.objectContaining({ msg: 'retention: purge run', stopped: false, total: 25, removed: expect.objectContaining({ rate_window_hits: 25 }) }));
    } finally {
      await next.stop();
    }
  });

  it('is never run by two engines at once: the lease is renewed while a long purge runs', async () => {
    const now = await dbNow(db);
    for (let i = 0; i < 40; i++) await insertRateHit(db.sql, new Date(now.getTime() - (i + 1) * S));
    // a 1 s lease, and a purge of about 4 s (4 pauses of 1 s): without the heartbeat, the other engine would claim it after 1 s
    const engines = [0, 1].map(() => createJobEngine(db, servicesOn(db, { batchSize: 10, pauseMs: 1000 }), { leaseSeconds: 1, pollSeconds: 0.1 }));
    for (const engine of engines) await engine.start();
    try {
      await waitFor(async () => (await count(db, 'retention_runs')) === 1, 15_000);
      // nothing ran it again meanwhile: one run, all 40 removed by it
      await new Promise((r) => setTimeout(r, 1500));
      const runs = await db.sql<{ removed: Record<string, number> }>('SELECT removed FROM retention_runs');
      expect(runs.map((r) => r.removed.rate_window_hits)).toEqual([40]);
    } finally {
      for (const engine of engines) await engine.stop();
    }
  });

  it('stops when a renewal finds its lease taken (the process had stalled past it): the purge is the new holder\'s', async () => {
    const now = await dbNow(db);
    for (let i = 0; i < 35; i++) await insertRateHit(db.sql, new Date(now.getTime() - (i + 1) * S));
    const warnings: string[] = [];
    const log = { info: () => {}, warn: (_o: object, m: string) => warnings.push(m), error: () => {} };
    const engine = createJobEngine(db, servicesOn(db, { batchSize: 10, pauseMs: 60_000 }), { leaseSeconds: 1, log });
    await engine.start();
    try {
      await waitFor(async () => (await count(db, 'rate_window_hits')) === 25);
      // another process claimed it meanwhile
      await db.sql("UPDATE jobs SET locked_by = 'another-process', locked_until = now() + interval '1 minute' WHERE kind = $1", [RETENTION_JOB]);
      await waitFor(async () => (await db.sql<{ stopped: boolean }>('SELECT stopped FROM retention_runs')).length === 1);
      expect(await db.sql('SELECT stopped FROM retention_runs')).toEqual([{ stopped: true }]);
      await waitFor(async () => warnings.length > 0);
      expect(warnings).toEqual(['job stopped: its lease was lost (another process may run it)']);
      // left to its new holder: neither given back nor rescheduled by this engine
      expect(await jobRow()).toMatchObject({ locked_by: 'another-process' });
      expect(await count(db, 'rate_window_hits')).toBe(25);
    } finally {
      await engine.stop();
    }
  });
});

/** The index each table's purge must range over (prisma/migrations/*_retention_indexes, and rate_window_hits' own). */
const INDEX: Record<RetentionTable, string> = {
  oauth_authorization_codes: 'oauth_authorization_codes_retention_idx',
  oauth_tokens: 'oauth_tokens_retention_idx',
  oauth_grants: 'oauth_grants_created_at_idx',
  oauth_client_secrets: 'oauth_client_secrets_expires_at_idx',
  oauth_client_token_counts: 'oauth_client_token_counts_ends_at_idx',
  rate_window_hits: 'rate_window_hits_expires_at_id_idx',
  webhook_invocations: 'webhook_invocations_completed_at_event_id_idx',
  events: 'events_time_idx',
  jobs: 'jobs_dead_at_idx',
  audit_logs: 'audit_logs_created_at_idx',
  callback_requests: 'callback_requests_retention_idx',
  oauth_sessions: 'oauth_sessions_retention_idx',
};

describeOnPostgres('each purge statement is a range scan of its index (EXPLAIN on PostgreSQL)', () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await createTestDb();
  });
  afterAll(() => db.close());

  /** The plans of the statements the repository runs for `call`, explained (not run), with sequential scans priced out. */
  async function plansOf(call: (repo: ReturnType<typeof repositories>['retention']) => Promise<unknown>): Promise<string[]> {
    const plans: string[] = [];
    await db.transaction(async (sql) => {
      await sql('SET LOCAL enable_seqscan = off');
      const explain = async <T>(text: string, params?: unknown[]) => {
        const rows = await sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
        plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
        return [{}] as T[];
      };
      await call(repositories(new TenantSql(explain)).retention);
    });
    return plans;
  }

  it.each(RETENTION_TABLES.map((t) => [t]))('%s: the batch and the dry-run count range over its index, no sequential scan', async (table) => {
    const cutoff = new Date(Date.now() - 3_600_000);
    const plans = await plansOf(async (repo) => {
      await repo.purgeBatch(table, cutoff, RANGE_START, 1000);
      await repo.countOver(table, cutoff);
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).not.toMatch(/Seq Scan/);
      const lines = plan.split('\n');
      const at = lines.findIndex((l) => new RegExp(`(Index Scan|Index Only Scan) using ${INDEX[table]} on ${table}|Bitmap Index Scan on ${INDEX[table]}`).test(l));
      expect({ table, found: at >= 0, plan }).toMatchObject({ found: true });
      // a range (Index Cond), not a walk along the whole index
      expect(lines.slice(at + 1, at + 3).join(' ')).toMatch(/Index Cond: .*< /);
    }
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}
