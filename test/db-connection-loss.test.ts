import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { createDb, type Db } from '../src/db/create-db';
import { isDatabaseUnavailable } from '../src/db/errors';
import { describeOnPostgres, TEST_DATABASE_URL } from './helpers/postgres';

// PostgreSQL ending sessions (pg_ctl stop, a restart, pg_terminate_backend) must never end
// the process: the statements that meet it fail (503), and the next ones run on new
// connections. The db-outage drill (test/faults/db-outage.test.ts) saw its server die
// once in ~4 CI runs on a loaded machine; these cases make its causes deterministic.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Terminates backend `pid` once it is idle (its last answer sent) and waits until it is
 * gone, in a child process run synchronously: this process reads nothing meanwhile, so
 * the answer's ReadyForQuery and the FATAL that follows it arrive in one read, as they do
 * on a loaded machine when the server stops.
 */
function terminateWhileBlocked(url: string, pid: number): void {
  const script = `
    const pg = require(${JSON.stringify(require.resolve('pg'))});
    (async () => {
      const c = new pg.Client({ connectionString: ${JSON.stringify(url)} });
      await c.connect();
      const state = async () => (await c.query('SELECT state FROM pg_stat_activity WHERE pid = $1', [${pid}])).rows[0]?.state;
      while ((await state()) !== 'idle') await new Promise((r) => setTimeout(r, 5));
      await c.query('SELECT pg_terminate_backend($1)', [${pid}]);
      while ((await state()) !== undefined) await new Promise((r) => setTimeout(r, 5));
      await c.end();
    })().catch((err) => { console.error(err); process.exit(1); });`;
  execFileSync(process.execPath, ['-e', script], { timeout: 20_000 });
}

describeOnPostgres('a database session ended by the server', () => {
  const url = TEST_DATABASE_URL!;
  let db: Db | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it('while transaction() waits for the pool connection that is answering: the transaction fails as unavailable, the process lives on', async () => {
    // one connection: the transaction waits for the one the statement holds, and the pool
    // hands it over inside the statement's last answer, before the FATAL of the same read
    db = await createDb({ databaseUrl: url, poolSize: 1 });
    const [{ pid }] = await db.sql<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const statement = db.sql('SELECT 1 AS one');
    const transaction = db.transaction((sql) => sql('SELECT 2 AS two'));
    // the pool sends the statement on the next tick
    await new Promise((r) => process.nextTick(r));
    terminateWhileBlocked(url, pid);
    // before the fix: an 'error' event on the pool's client with no listener, thrown out of
    // the socket's data handler (the server process died of it)
    await expect(statement).resolves.toEqual([{ one: 1 }]);
    const err = await transaction.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(isDatabaseUnavailable(err)).toBe(true);
    // the ended connection left the pool: the next statements get a new one
    await expect(db.transaction((sql) => sql('SELECT 3 AS three'))).resolves.toEqual([{ three: 3 }]);
    await expect(db.sql('SELECT 4 AS four')).resolves.toEqual([{ four: 4 }]);
  });

  it('LISTEN: a lost connection is reconnected, onNotify is called once it is back, and NOTIFY reaches it again', async () => {
    db = await createDb({ databaseUrl: url, poolSize: 2 });
    const channel = `loss_${process.pid}`;
    const calls: (string | undefined)[] = [];
    const stop = await db.listen(channel, (payload) => calls.push(payload));
    try {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const listeners = async () =>
          (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()", [`LISTEN "${channel}"`])).rows;
        const [listener] = await listeners();
        expect(listener).toBeDefined();
        await admin.query('SELECT pg_terminate_backend($1)', [listener.pid]);
        const until = Date.now() + 10_000;
        while (!calls.includes(undefined) && Date.now() < until) await sleep(20);
        expect(calls).toEqual([undefined]);
        await admin.query('SELECT pg_notify($1, $2)', [channel, 'after']);
        while (!calls.includes('after') && Date.now() < until) await sleep(20);
        expect(calls).toEqual([undefined, 'after']);
      } finally {
        await admin.end();
      }
    } finally {
      await stop();
    }
  });
});
