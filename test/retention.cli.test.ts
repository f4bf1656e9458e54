import { createDb } from '../src/db/create-db';
import { processDatabase, runCli, type CliResult } from './helpers/processes';

// docs/api.md, "Retention": `npm run cli -- purge [--dry-run]` runs the purge once, with a
// real process on the embedded database (PGlite runs) or a fresh PostgreSQL database,
// and prints per table what it removed, and the total.

jest.setTimeout(120_000);

const DAY = 86_400_000;

/** The figures of the printed table: table name → number. */
function figures(result: CliResult): Record<string, number> {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  const rows = result.stdout.split('\n').filter((l) => /^\w+\s+[\d,]+$/.test(l));
  return Object.fromEntries(rows.map((l) => l.split(/\s+/)).map(([table, n]) => [table, Number(n.replace(/,/g, ''))]));
}

describe('npm run cli -- purge (docs/api.md, "Retention")', () => {
  let database: Awaited<ReturnType<typeof processDatabase>> | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await processDatabase('retention-cli-');
    env = { ...database.env };
  });
  afterAll(() => database?.remove());

  /** Runs fn on the CLI's database (the embedded one is free between two commands). */
  async function onDatabase<T>(fn: (sql: Awaited<ReturnType<typeof createDb>>['sql']) => Promise<T>): Promise<T> {
    const db = await createDb({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR, poolSize: 1 });
    try {
      return await fn(db.sql);
    } finally {
      await db.close();
    }
  }
  const left = () =>
    onDatabase(async (sql) => (await sql<{ hits: number; jobs: number }>("SELECT (SELECT count(*)::int FROM rate_window_hits) AS hits, (SELECT count(*)::int FROM jobs WHERE kind = 'cli-dead') AS jobs"))[0]);

  it('prints a table a person reads: every table, the total, and that a dry run removed nothing', async () => {
    const result = await runCli(['purge', '--dry-run'], env);
    expect(result.stdout).toMatch(/^table\s+would remove\n/);
    expect(result.stdout).toMatch(/\ndry run: nothing was removed; took \d+ ms\n$/);
    const counts = figures(result);
    expect(Object.keys(counts)).toEqual([
      'oauth_authorization_codes', 'oauth_tokens', 'oauth_grants', 'oauth_client_secrets', 'oauth_client_token_counts', 'rate_window_hits',
      'webhook_invocations', 'events', 'jobs', 'audit_logs', 'callback_requests', 'oauth_sessions', 'total',
    ]);
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
  });

  it('--dry-run counts what is over and removes nothing; purge removes it and says so; a second purge finds nothing', async () => {
    await onDatabase(async (sql) => {
      await sql("INSERT INTO rate_window_hits (key, created_at, expires_at) SELECT 'cli:' || g, now() - interval '1 hour', now() - interval '55 minutes' FROM generate_series(1, 3) g");
      await sql("INSERT INTO rate_window_hits (key, created_at, expires_at) VALUES ('cli:live', now(), now() + interval '5 minutes')");
      await sql("INSERT INTO jobs (kind, dead_at) SELECT 'cli-dead', $1::timestamptz FROM generate_series(1, 2)", [new Date(Date.now() - 8 * DAY)]);
      await sql("INSERT INTO jobs (kind, dead_at) VALUES ('cli-dead', now())");
    });
    const dry = figures(await runCli(['purge', '--dry-run'], env));
    expect(dry).toMatchObject({ rate_window_hits: 3, jobs: 2, total: 5 });
    expect(await left()).toEqual({ hits: 4, jobs: 3 });

    const real = await runCli(['purge'], env);
    expect(real.stdout).toMatch(/^table\s+removed\n/);
    expect(real.stdout).not.toContain('dry run');
    expect(figures(real)).toMatchObject({ rate_window_hits: 3, jobs: 2, total: 5 });
    expect(await left()).toEqual({ hits: 1, jobs: 1 });
    // the run is what /readyz shows as the last one
    const [run] = await onDatabase((sql) => sql<{ removed: Record<string, number> }>('SELECT removed FROM retention_runs ORDER BY id DESC LIMIT 1'));
    expect(run.removed).toMatchObject({ rate_window_hits: 3, jobs: 2 });

    expect(figures(await runCli(['purge'], env)).total).toBe(0);
  });

  it('follows the retention settings of the environment, and refuses a bad one naming it', async () => {
    // with JOB_RETENTION_SECONDS=0, the job that died a moment ago is over too
    expect(figures(await runCli(['purge', '--dry-run'], { ...env, JOB_RETENTION_SECONDS: '0' }))).toMatchObject({ jobs: 1 });
    const bad = await runCli(['purge'], { ...env, RETENTION_BATCH_SIZE: '0' });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('RETENTION_BATCH_SIZE');
    expect((await runCli(['--help'], env)).stdout).toContain('purge [--dry-run]');
  });
});
