import { describeOnPostgres } from './helpers/postgres';
import { killAll, processDatabase, runToExit, SERVER_JS, startServer } from './helpers/processes';

// The background engine in real processes (docs/api.md, "Background jobs"): npm start runs it
// unless WORKER=false / --no-worker (a web-only process), `npm run worker` runs it alone with
// no HTTP, and each says so in /readyz or its log; a worker stops on SIGTERM at once when idle.

jest.setTimeout(120_000);

const ADMIN_PASSWORD = 'jobs-processes-admin-pw';

describeOnPostgres('the background engine in its processes', () => {
  let database: Awaited<ReturnType<typeof processDatabase>> | undefined;
  /** DATABASE_URL (a fresh database: this block runs on PostgreSQL only) and DATA_DIR */
  let env: { DATA_DIR: string; DATABASE_URL?: string; ADMIN_PASSWORD: string };

  beforeAll(async () => {
    database = await processDatabase('jobs-processes-');
    env = { ...database.env, ADMIN_PASSWORD };
  });
  afterAll(async () => {
    try {
      await killAll();
    } finally {
      await database?.remove();
    }
  });

  const readyz = async (base: string) => (await (await fetch(`${base}/readyz`)).json()) as { status: string; jobs: { worker: boolean } };

  it('npm start runs the engine; --no-worker and WORKER=false make a web-only process', async () => {
    const [both, webOnly, webOnlyByEnv] = await Promise.all([
      startServer(env),
      startServer(env, { args: ['--no-worker'] }),
      startServer({ ...env, WORKER: 'false' }),
    ]);
    expect((await readyz(both.url)).jobs.worker).toBe(true);
    expect((await readyz(webOnly.url)).jobs.worker).toBe(false);
    expect((await readyz(webOnlyByEnv.url)).jobs.worker).toBe(false);
    expect(await Promise.all([both.stop(), webOnly.stop(), webOnlyByEnv.stop()])).toEqual([0, 0, 0]);
  });

  it('npm run worker runs the engine alone, without HTTP, and stops on SIGTERM', async () => {
    const worker = await startServer(env, { args: ['--worker-only'], readyLine: 'worker started' });
    expect(worker.logs.join('\n')).not.toContain('listening on');
    const stopped = Date.now();
    expect(await worker.stop()).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(5000);
  });

  it('npm run worker refuses the embedded database, naming DATABASE_URL', async () => {
    const run = await runToExit(SERVER_JS, ['--worker-only'], { DATA_DIR: env.DATA_DIR, ADMIN_PASSWORD });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('npm run worker needs DATABASE_URL');
  });
});
