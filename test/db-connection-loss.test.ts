import { execFileSync } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
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

  it('LISTEN: a lost connection is reconnected, onNotify is called once it is back, and NOTIFY reaches it again; the loss is logged once', async () => {
    const logged: string[] = [];
    const log = { warn: (_: object, msg: string) => logged.push(`warn ${msg}`), info: (_: object, msg: string) => logged.push(`info ${msg}`) };
    db = await createDb({ databaseUrl: url, poolSize: 2, log });
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
        expect(logged).toEqual(['warn LISTEN: connection lost; reconnecting every second', 'info LISTEN: reconnected']);
      } finally {
        await admin.end();
      }
    } finally {
      await stop();
    }
  });
  it('LISTEN through an outage of several seconds: retried every second, said once when lost and once when back, onNotify called once', async () => {
    // a proxy in front of the server: "down" hangs up every connection, open and new
    const target = new URL(url);
    let down = false;
    let refused = 0;
    const open = new Set<Socket>();
    const proxy = createServer((socket) => {
      if (down) {
        refused++;
        return socket.destroy();
      }
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const s of [socket, upstream]) {
        open.add(s);
        s.on('error', () => s.destroy());
        s.on('close', () => open.delete(s));
      }
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    });
    const port = await new Promise<number>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve((proxy.address() as { port: number }).port)));
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(port);
    const logged: string[] = [];
    const log = { warn: (_: object, msg: string) => logged.push(`warn ${msg}`), info: (_: object, msg: string) => logged.push(`info ${msg}`) };
    db = await createDb({ databaseUrl: proxied.toString(), poolSize: 1, log });
    const calls: (string | undefined)[] = [];
    const stop = await db.listen('outage', (payload) => calls.push(payload));
    try {
      down = true;
      for (const s of open) s.destroy();
      await sleep(3_500);
      expect(calls).toEqual([]);
      expect(refused).toBeGreaterThanOrEqual(2);
      down = false;
      const until = Date.now() + 10_000;
      while (calls.length === 0 && Date.now() < until) await sleep(20);
      await sleep(200);
      expect(calls).toEqual([undefined]);
      expect(logged).toEqual(['warn LISTEN: connection lost; reconnecting every second', 'info LISTEN: reconnected']);
    } finally {
      await stop();
      for (const s of open) s.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });
});

describe('LISTEN whose first connection fails', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => server?.close(r) ?? r(undefined));
    server = undefined;
  });

  it('rejects, and leaves no reconnection behind (it would LISTEN for nobody, on a connection nobody can end)', async () => {
    // a "server" that accepts and hangs up at once: each connection attempt is counted
    let attempts = 0;
    server = createServer((socket: Socket) => {
      attempts++;
      socket.destroy();
    });
    const port = await new Promise<number>((resolve) => server!.listen(0, '127.0.0.1', () => resolve((server!.address() as { port: number }).port)));
    const db = await createDb({ databaseUrl: `postgresql://postgres@127.0.0.1:${port}/postgres`, poolSize: 1 });
    try {
      await expect(db.listen('nobody', () => {})).rejects.toThrow(/Connection terminated/);
      expect(attempts).toBe(1);
      // past the reconnection delay (1 s): nothing tried again
      await sleep(1_500);
      expect(attempts).toBe(1);
    } finally {
      await db.close();
    }
  });
});
