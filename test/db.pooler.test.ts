import { existsSync } from 'node:fs';
import pg from 'pg';
import { MIGRATION_LOCK_KEY } from '../src/db/advisory-locks';
import { createDb, type Db } from '../src/db/create-db';
import { migrate, migrationsApplied } from '../src/db/migrate';
import { readMigrations } from '../src/db/schema-engine';
import { startPgServer, type PgServer } from './helpers/pg-server';
import { PGBOUNCER, startPgBouncer, type PgBouncer } from './helpers/pgbouncer';
import { onPostgres } from './helpers/postgres';
import { describeIf } from './helpers/skip';

// Behind a transaction pooler (DATABASE_URL?pgbouncer=true, docs/scaling.md): a real
// pgbouncer 1.18 in pool_mode=transaction, three server connections, in front of a
// PostgreSQL server of the test's own. Named prepared statements break there (without the
// flag, the process notices, says so and stops naming them: the warning also shows that the
// pooler really hands one client's statements to other sessions); with the flag
// every statement is unnamed and every answer right; the session things (the migration
// lock, LISTEN, migrations) go to DIRECT_URL, the server itself.
// On the PostgreSQL run (TEST_DATABASE_URL), where CI has the PostgreSQL binaries and pgbouncer.

jest.setTimeout(60_000);

/** Distinct statement texts of a burst, each run this many times at once. */
const TEXTS = 8;
const RUNS_PER_TEXT = 25;

type Logged = { level: 'info' | 'warn'; msg: string; obj: object };
const collectingLog = () => {
  const calls: Logged[] = [];
  return { calls, log: { info: (obj: object, msg: string) => calls.push({ level: 'info', obj, msg }), warn: (obj: object, msg: string) => calls.push({ level: 'warn', obj, msg }) } };
};

/** TEXTS × RUNS_PER_TEXT queries at once, each text its own statement; what each answered (or why not). */
function burst(db: Db) {
  const queries = Array.from({ length: TEXTS * RUNS_PER_TEXT }, (_, i) => {
    const text = i % TEXTS;
    return { want: i + 1000 * text, run: () => db.sql<{ v: number }>(`SELECT $1::int + ${1000 * text} AS v /* burst text ${text} */`, [i]) };
  });
  return Promise.allSettled(queries.map(async (q) => ({ want: q.want, got: (await q.run())[0].v })));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const runs = onPostgres && existsSync('/usr/lib/postgresql') && existsSync(PGBOUNCER);

describeIf(runs, 'needs-postgres', `runs on the PostgreSQL run (TEST_DATABASE_URL), with the PostgreSQL binaries and ${PGBOUNCER} (apt-get install postgresql pgbouncer)`)(
  'DATABASE_URL?pgbouncer=true behind a real pgbouncer in transaction mode',
  () => {
    let server: PgServer;
    let bouncer: PgBouncer;
    /** the database on the server itself (DIRECT_URL) */
    let directUrl: string;
    /** the same database through pgbouncer, with the flag */
    let pooledUrl: string;
    const opened: Db[] = [];
    const open = async (...args: Parameters<typeof createDb>) => {
      const db = await createDb(...args);
      opened.push(db);
      return db;
    };

    beforeAll(async () => {
      server = await startPgServer();
      bouncer = await startPgBouncer(server, { serverConnections: 3 });
      directUrl = await server.createDatabase('pooled');
      pooledUrl = `${bouncer.url('pooled')}?pgbouncer=true`;
    });
    afterAll(async () => {
      for (const db of opened) await db.close();
      await bouncer?.cleanup();
      await server?.cleanup();
    });

    it('without the flag: the pooler shows itself at the first refused named statement — said once, naming DATABASE_URL, and every answer still right', async () => {
      const { calls, log } = collectingLog();
      const db = await open({ databaseUrl: bouncer.url('pooled'), poolSize: 20, log });
      const results = await burst(db);
      // (before: 130 to 170 of these 200 failed with 'prepared statement "sN" already exists')
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      for (const r of results) if (r.status === 'fulfilled') expect(r.value.got).toBe(r.value.want);
      // the warning is only given when a named statement met another session: the control that
      // this burst really went through transaction pooling
      const warnings = calls.filter((c) => c.level === 'warn');
      expect(warnings).toEqual([expect.objectContaining({ obj: { variable: 'DATABASE_URL' }, msg: expect.stringMatching(/looks like a transaction pooler.*add \?pgbouncer=true to DATABASE_URL/) })]);
      // from then on nothing is named: a second burst gives no second warning, and no failure
      const again = await burst(db);
      expect(again.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(calls.filter((c) => c.level === 'warn')).toHaveLength(1);
    });

    it('with ?pgbouncer=true: the same burst and concurrent transactions all succeed, with the right answers', async () => {
      const db = await open({ databaseUrl: pooledUrl, directUrl, poolSize: 20 });
      const results = await burst(db);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      for (const r of results) if (r.status === 'fulfilled') expect(r.value.got).toBe(r.value.want);

      await db.sql('CREATE TABLE counters (k int PRIMARY KEY, v int NOT NULL)');
      const transactions = Array.from({ length: 30 }, (_, k) =>
        db.transaction(async (sql) => {
          const [{ xid: first }] = await sql<{ xid: string }>('SELECT txid_current()::text AS xid');
          await sql('INSERT INTO counters (k, v) VALUES ($1, $2)', [k, k * 10]);
          await sql('UPDATE counters SET v = v + 1 WHERE k = $1', [k]);
          const [{ v }] = await sql<{ v: number }>('SELECT v FROM counters WHERE k = $1', [k]);
          const [{ xid: last, timeout }] = await sql<{ xid: string; timeout: string }>("SELECT txid_current()::text AS xid, current_setting('statement_timeout') AS timeout");
          return { k, v, sameTransaction: first === last, timeout };
        }, "SET LOCAL statement_timeout = '7s'"),
      );
      const done = await Promise.all(transactions);
      // every statement of a transaction ran in it (one server session), `first` with BEGIN
      expect(done).toEqual(Array.from({ length: 30 }, (_, k) => ({ k, v: k * 10 + 1, sameTransaction: true, timeout: '7s' })));
      const rows = await db.sql<{ n: number; total: number }>('SELECT count(*)::int AS n, sum(v)::int AS total FROM counters');
      expect(rows).toEqual([{ n: 30, total: Array.from({ length: 30 }, (_, k) => k * 10 + 1).reduce((a, b) => a + b) }]);

      // a transaction that throws is rolled back, and the next statements are fine
      await expect(
        db.transaction(async (sql) => {
          await sql('INSERT INTO counters (k, v) VALUES ($1, 0)', [100]);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await db.sql('SELECT k FROM counters WHERE k = $1', [100])).toEqual([]);
    });

    it('refuses ?pgbouncer=true without a direct URL, naming DIRECT_URL', async () => {
      await expect(createDb({ databaseUrl: pooledUrl })).rejects.toThrow(/DIRECT_URL/);
      // and a direct URL that is itself the pooler
      await expect(createDb({ databaseUrl: pooledUrl, directUrl: pooledUrl })).rejects.toThrow(/DIRECT_URL must reach the primary itself/);
    });

    it('serialises withMigrationLock across two pooled Db on the server itself; the second says it waits; the lock is released', async () => {
      const logs = [collectingLog(), collectingLog()];
      const dbs = [await open({ databaseUrl: pooledUrl, directUrl, log: logs[0].log }), await open({ databaseUrl: pooledUrl, directUrl, log: logs[1].log })];
      const events: string[] = [];
      const spans: { start: number; end: number }[] = [];
      const hold = (i: number) => async () => {
        const start = performance.now();
        events.push(`start ${i}`);
        await sleep(700);
        events.push(`end ${i}`);
        spans[i] = { start, end: performance.now() };
        return i;
      };
      expect(await Promise.all([dbs[0].withMigrationLock(hold(0)), dbs[1].withMigrationLock(hold(1))])).toEqual([0, 1]);
      // one after the other, never both inside
      expect([['start 0', 'end 0', 'start 1', 'end 1'], ['start 1', 'end 1', 'start 0', 'end 0']]).toContainEqual(events);
      const first = Number(events[0].slice(-1));
      const second = 1 - first;
      expect(spans[second].start).toBeGreaterThanOrEqual(spans[first].end);
      // the one that waited said so, at once (not after 10 s); the other said nothing
      const waiting = (i: number) => logs[i].calls.filter((c) => c.msg === 'waiting for the migration lock: another process is migrating');
      expect(waiting(second)).toEqual([{ level: 'info', obj: { waitedSeconds: 0 }, msg: 'waiting for the migration lock: another process is migrating' }]);
      expect(logs[first].calls).toEqual([]);

      // released: a third taker gets it at once, without waiting
      const third = collectingLog();
      const db3 = await open({ databaseUrl: pooledUrl, directUrl, log: third.log });
      const asked = performance.now();
      expect(await db3.withMigrationLock(async () => performance.now() - asked)).toBeLessThan(1000);
      expect(third.calls).toEqual([]);
      const held = await db3.sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'");
      expect(held).toEqual([{ n: 0 }]);
    });

    it('a process that waits longer for the migration lock says so again every 10 s, with how long it has waited', async () => {
      // another session (a process migrating for a while) holds the lock for 10.6 s
      const holder = new pg.Client({ connectionString: directUrl });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        const { calls, log } = collectingLog();
        const db = await open({ databaseUrl: pooledUrl, directUrl, log });
        const asked = performance.now();
        const waited = db.withMigrationLock(async () => performance.now() - asked);
        await sleep(10_600);
        await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
        expect(await waited).toBeGreaterThanOrEqual(10_600);
        expect(calls.map((c) => [c.level, c.msg, c.obj])).toEqual([
          ['info', 'waiting for the migration lock: another process is migrating', { waitedSeconds: 0 }],
          ['info', 'waiting for the migration lock: another process is migrating', { waitedSeconds: 10 }],
        ]);
      } finally {
        await holder.end();
      }
    }, 30_000);

    it('LISTENs on the server itself: a NOTIFY sent through the pooler arrives, and one sent with the pooler stopped too', async () => {
      const db = await open({ databaseUrl: pooledUrl, directUrl });
      const received: (string | undefined)[] = [];
      const stop = await db.listen('pooler_test', (payload) => received.push(payload));
      const arrived = async (payload: string) => {
        for (const until = Date.now() + 5000; !received.includes(payload) && Date.now() < until; ) await sleep(20);
        return received.includes(payload);
      };
      try {
        await db.sql("SELECT pg_notify('pooler_test', $1)", ['through the pooler']);
        expect(await arrived('through the pooler')).toBe(true);
        // the listening session is not one of the pooler's: it keeps listening while the pooler is down
        await bouncer.stop();
        const direct = new pg.Client({ connectionString: directUrl });
        await direct.connect();
        await direct.query("SELECT pg_notify('pooler_test', 'pooler stopped')");
        await direct.end();
        expect(await arrived('pooler stopped')).toBe(true);
        expect(received).toEqual(['through the pooler', 'pooler stopped']);
      } finally {
        await stop();
        await bouncer.start();
      }
    });

    it('applies the migrations to a fresh database through a pooled Db (on DIRECT_URL), and the pooled reads see them', async () => {
      const fresh = await server.createDatabase('fresh');
      const db = await open({ databaseUrl: `${bouncer.url('fresh')}?pgbouncer=true`, directUrl: fresh, poolSize: 5 });
      expect(await migrationsApplied(db)).toBe(false);
      const applied = await migrate(db);
      expect(applied).toEqual(readMigrations().migrationDirectories.map((m) => m.path));
      expect(await migrationsApplied(db)).toBe(true);
      // again: nothing left to apply
      expect(await migrate(db)).toEqual([]);
      expect(await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM accounts')).toEqual([{ n: expect.any(Number) }]);
    });
  },
);
