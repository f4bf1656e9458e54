import { tenantTransaction, TenantSql } from '../src/db/tenant-sql';
import { repositories } from '../src/domain/repositories';
import type { ClaimedJob, JobRepository, NewJob } from '../src/domain/jobs/job.repository';
import { FinalJobError, JobEngine, RetryJobLater, type JobEngineOptions, type JobKind } from '../src/jobs/engine';
import { createTestDb, type TestDb } from './helpers/test-db';

// The background engine (src/jobs/engine.ts) on the jobs table: a job written in a
// transaction runs when that transaction commits and never when it rolls back; it runs
// once, is retried with backoff, honours a retry delay, dies when its attempts are used
// up; timers fire on time without a poll; a job whose process stopped answering (its
// lease ran out) is run by another engine. Runs on PGlite, and on PostgreSQL in CI.

const QUIET = { pollSeconds: 30 } satisfies JobEngineOptions;

describe('the job engine', () => {
  let db: TestDb;
  let jobs: JobRepository;
  let account: bigint;
  const engines: JobEngine[] = [];

  beforeAll(async () => {
    db = await createTestDb();
    jobs = repositories(new TenantSql(db.sql)).jobs;
    const [row] = await db.sql<{ id: string }>("INSERT INTO accounts (name) VALUES ('jobs') RETURNING id");
    account = BigInt(row.id);
  });
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.stop()));
    await db.sql('DELETE FROM jobs');
  });
  afterAll(() => db.close());

  const engine = (kinds: Record<string, JobKind>, options: JobEngineOptions = QUIET) => {
    const e = new JobEngine(db, jobs, options);
    for (const [kind, handler] of Object.entries(kinds)) e.handle(kind, handler);
    engines.push(e);
    return e;
  };
  /** A handler that records the jobs it ran, and the time of each run. */
  const recorder = (behaviour: (job: ClaimedJob, n: number) => Promise<void> | void = () => {}) => {
    const runs: { job: ClaimedJob; at: number }[] = [];
    const handler: JobKind = {
      run: async (job) => {
        runs.push({ job, at: Date.now() });
        await behaviour(job, runs.length);
      },
      retryIn: () => 0.05,
    };
    return { runs, handler };
  };
  const enqueue = (job: NewJob) => tenantTransaction(db, (sql) => repositories(sql).jobs.enqueue({ accountId: account }, job));
  const until = async (check: () => boolean | Promise<boolean>, ms = 5000) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const rows = () => db.sql<{ kind: string; attempts: number; dead_at: Date | null; last_error: string | null }>('SELECT kind, attempts, dead_at, last_error FROM jobs ORDER BY id');

  it('runs a job once its transaction commits, woken by NOTIFY (the poll is 30 s), and removes it', async () => {
    const { runs, handler } = recorder();
    await engine({ mail: handler }).start();
    const committed = Date.now();
    await enqueue({ kind: 'mail', payload: { to: 'a@example.com' } });
    await until(() => runs.length === 1);
    expect(runs[0].at - committed).toBeLessThan(1000);
    expect(runs[0].job).toMatchObject({ kind: 'mail', accountId: account, payload: { to: 'a@example.com' }, attempt: 1 });
    await until(async () => (await rows()).length === 0);
  });

  it('never runs a job whose transaction rolled back', async () => {
    const { runs, handler } = recorder();
    await engine({ mail: handler }).start();
    await expect(
      tenantTransaction(db, async (sql) => {
        await repositories(sql).jobs.enqueue({ accountId: account }, { kind: 'mail' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await enqueue({ kind: 'mail', payload: { n: 2 } });
    await until(() => runs.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(runs.map((r) => r.job.payload)).toEqual([{ n: 2 }]);
    expect(await rows()).toEqual([]);
  });

  it('retries a failing job with its backoff until it succeeds', async () => {
    const { runs, handler } = recorder((_job, n) => {
      if (n < 3) throw new Error(`receiver down (${n})`);
    });
    await engine({ deliver: handler }).start();
    await enqueue({ kind: 'deliver' });
    await until(() => runs.length === 3);
    expect(runs.map((r) => r.job.attempt)).toEqual([1, 2, 3]);
    await until(async () => (await rows()).length === 0);
  });

  it('honours a retry delay (Retry-After), and marks a final failure dead with its error, never run again', async () => {
    const { runs, handler } = recorder((job, n) => {
      if (job.payload.final) throw new FinalJobError('400 Bad Request');
      if (n === 1) throw new RetryJobLater('429', 0.8);
    });
    const e = engine({ deliver: handler });
    await e.start();
    await enqueue({ kind: 'deliver' });
    await until(() => runs.length === 2);
    expect(runs[1].at - runs[0].at).toBeGreaterThanOrEqual(750);
    await enqueue({ kind: 'deliver', payload: { final: true } });
    await until(async () => (await rows()).some((r) => r.dead_at !== null));
    await new Promise((r) => setTimeout(r, 200));
    expect(runs).toHaveLength(3);
    expect(await rows()).toEqual([expect.objectContaining({ kind: 'deliver', attempts: 1, last_error: '400 Bad Request', dead_at: expect.any(Date) })]);
    expect(await e.stats()).toMatchObject({ pending: 0, dead: 1, processed: { done: 1, retried: 1, dead: 1 } });
  });

  it('marks a job dead when its attempts are used up', async () => {
    const { runs, handler } = recorder(() => {
      throw new Error('always');
    });
    await engine({ deliver: handler }).start();
    await enqueue({ kind: 'deliver', maxAttempts: 3 });
    await until(async () => (await rows())[0]?.dead_at != null);
    expect(runs).toHaveLength(3);
    expect(await rows()).toEqual([expect.objectContaining({ attempts: 3, last_error: 'always' })]);
  });

  it('fires a delayed job on time, without waiting for the poll', async () => {
    const { runs, handler } = recorder();
    await engine({ timer: handler }).start();
    const at = Date.now();
    await enqueue({ kind: 'timer', delaySeconds: 1 });
    await until(() => runs.length === 1, 3000);
    const late = runs[0].at - at;
    expect(late).toBeGreaterThanOrEqual(990);
    expect(late).toBeLessThan(1500);
  });

  it('keeps one pending job per key', async () => {
    expect(await enqueue({ kind: 'purge', key: 'daily' })).toBe(true);
    expect(await enqueue({ kind: 'purge', key: 'daily' })).toBe(false);
    expect(await enqueue({ kind: 'purge' })).toBe(true);
    expect(await rows()).toHaveLength(2);
  });

  it('runs a job again when the process holding it stopped answering (its lease ran out); the late finish is refused', async () => {
    await enqueue({ kind: 'deliver' });
    // a process that claimed the job and died: a lease of 0.3 s, never finished
    // (claimed in a retry loop: one CI run found nothing to claim right after the enqueue; not
    // reproduced in 1,500 tries here, a wall clock stepping back by a millisecond is the likely cause)
    let held: ClaimedJob | undefined;
    await until(async () => (held = (await jobs.claim('dead-process', ['deliver'], 10, 0.3))[0]) !== undefined, 2000);
    if (!held) throw new Error('unreachable: until() returned without a claimed job');
    expect(held.attempt).toBe(1);
    const { runs, handler } = recorder();
    await engine({ deliver: handler }, { pollSeconds: 0.1 }).start();
    await until(() => runs.length === 1);
    expect(runs[0].job.attempt).toBe(2);
    expect(await jobs.finish('dead-process', held)).toBe(false);
  });

  it('runs a recurring job again and again, one row across engines', async () => {
    const { runs, handler } = recorder();
    await engine({ tick: { ...handler, everySeconds: 0.2 } }).start();
    await engine({ tick: { ...handler, everySeconds: 0.2 } }).start();
    await until(() => runs.length >= 3, 3000);
    expect(await rows()).toEqual([expect.objectContaining({ kind: 'tick' })]);
  });

  it('shares 300 jobs between two engines: each runs exactly once', async () => {
    const seen = new Map<string, number>();
    const handler: JobKind = {
      run: async (job) => {
        seen.set(String(job.payload.n), (seen.get(String(job.payload.n)) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
      },
    };
    await engine({ work: handler }, { pollSeconds: 0.2, concurrency: 5 }).start();
    await engine({ work: handler }, { pollSeconds: 0.2, concurrency: 5 }).start();
    await tenantTransaction(db, async (sql) => {
      for (let n = 0; n < 300; n++) await repositories(sql).jobs.enqueue({ accountId: account }, { kind: 'work', payload: { n } });
    });
    await until(() => seen.size === 300, 30_000);
    await until(async () => (await rows()).length === 0);
    expect([...seen.values()].filter((count) => count !== 1)).toEqual([]);
  });

  it('stops gracefully: waits for the job it runs, then claims nothing more', async () => {
    let release!: () => void;
    const started: number[] = [];
    const handler: JobKind = {
      run: (job) => {
        started.push(Number(job.payload.n));
        return new Promise<void>((resolve) => (release = resolve));
      },
    };
    const e = engine({ slow: handler }, { ...QUIET, concurrency: 1 });
    await e.start();
    await enqueue({ kind: 'slow', payload: { n: 1 } });
    await until(() => started.length === 1);
    await enqueue({ kind: 'slow', payload: { n: 2 } });
    let stopped = false;
    const stopping = e.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(started).toEqual([1]);
    // the second job is still there, unclaimed, for the next process
    expect(await rows()).toEqual([expect.objectContaining({ kind: 'slow', attempts: 0 })]);
    expect(await jobs.stats()).toMatchObject({ pending: 1, due: 1, running: 0, dead: 0 });
  });
});
