import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app';
import { databaseConnection, loadConfig } from '../src/config';
import { createDb, type Db } from '../src/db/create-db';
import { migrate } from '../src/db/migrate';
import { hashPassword } from '../src/domain/auth/passwords';
import { servicesFor } from '../src/domain/services';
import { parseLsn } from '../src/db/replicas';
import { startPgServer, startReplica, type PgServer } from './helpers/pg-server';
import { onPostgres } from './helpers/postgres';
import { describeIf } from './helpers/skip';
import { basicHeader } from './helpers/test-app';

// Reads beside a real streaming replica (READ_REPLICA_URL, REPLICA_MAX_LAG_MS; src/db/replicas.ts):
// a primary of the test's own and a hot standby made from it with pg_basebackup. Db.read goes to
// the replica only while it has provably replayed what the primary had REPLICA_MAX_LAG_MS ago,
// else to the primary; a replica paused, stopped or not a standby at all costs no read.
// On the PostgreSQL run (TEST_DATABASE_URL), where CI has the PostgreSQL binaries.

jest.setTimeout(60_000);

const MAX_LAG_MS = 300;
/** the monitor's period for that lag (maxLag / 4, at least 50 ms) */
const INTERVAL_MS = 75;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Logged = { level: 'info' | 'warn'; msg: string };
const collectingLog = () => {
  const calls: Logged[] = [];
  return { calls, log: { info: (_: object, msg: string) => calls.push({ level: 'info', msg }), warn: (_: object, msg: string) => calls.push({ level: 'warn', msg }) } };
};

/** Which server answered a read: true = a standby (the replica), false = the primary. */
const WHO = 'SELECT pg_is_in_recovery() AS r';

async function readsFromReplica(db: Db): Promise<boolean> {
  const [{ r }] = await db.read<{ r: boolean }>(WHO);
  return r;
}

/** Polls until `check` holds; how long that took (ms), or a failure after `limitMs`. */
async function within(limitMs: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(10);
  }
}

describe('parseLsn', () => {
  it('orders WAL positions as PostgreSQL does (high word first, both hexadecimal)', () => {
    expect(parseLsn('0/16B3748') < parseLsn('1/0')).toBe(true);
    expect(parseLsn('0/FFFFFFFF') < parseLsn('1/0')).toBe(true);
    expect(parseLsn('0/9') < parseLsn('0/A')).toBe(true);
    expect(parseLsn('0/16B3748')).toBe(0x16b3748n);
    expect(parseLsn('1/0')).toBe(1n << 32n);
    expect(parseLsn('A/1')).toBe((10n << 32n) + 1n);
    expect(parseLsn('FFFFFFFF/FFFFFFFF')).toBe((1n << 64n) - 1n);
    expect(parseLsn('0/3000060')).toBe(parseLsn('0/03000060'));
  });
});

const runs = onPostgres && existsSync('/usr/lib/postgresql');

describeIf(runs, 'needs-postgres', 'runs on the PostgreSQL run (TEST_DATABASE_URL), with the PostgreSQL binaries (apt-get install postgresql)')(
  'Db.read beside a real streaming replica (REPLICA_MAX_LAG_MS=300)',
  () => {
    let primary: PgServer;
    let replica: PgServer;
    let primaryUrl: string;
    let replicaUrl: string;
    let db: Db;
    const logged = collectingLog();
    const opened: Db[] = [];

    beforeAll(async () => {
      primary = await startPgServer();
      primaryUrl = await primary.createDatabase('app');
      const setup = new pg.Client({ connectionString: primaryUrl });
      await setup.connect();
      await setup.query('CREATE TABLE ticks (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())');
      await setup.end();
      replica = await startReplica(primary);
      replicaUrl = `postgresql://postgres@127.0.0.1:${replica.port}/app`;
      db = await createDb({ databaseUrl: primaryUrl, replicaUrls: [replicaUrl], replicaMaxLagMs: MAX_LAG_MS, poolSize: 4, log: logged.log });
      opened.push(db);
    });
    afterAll(async () => {
      for (const d of opened) await d.close();
      await replica?.cleanup();
      await primary?.cleanup();
    });

    /** Inserts a row on the primary every few ms until stopped; each id with the time its commit was acknowledged. */
    function writer() {
      const commits: { id: number; at: number }[] = [];
      let stopped = false;
      const done = (async () => {
        while (!stopped) {
          const [{ id }] = await db.sql<{ id: string }>('INSERT INTO ticks DEFAULT VALUES RETURNING id');
          commits.push({ id: Number(id), at: Date.now() });
          await sleep(5);
        }
      })();
      return {
        commits,
        async stop() {
          stopped = true;
          await done;
        },
      };
    }

    it('reads from the replica once it is fresh (the primary answers db.sql); its state says usable, lag within the bound', async () => {
      const took = await within(5000, 'the replica taking reads', () => readsFromReplica(db));
      expect(took).toBeLessThan(5000);
      expect(await db.sql(WHO)).toEqual([{ r: false }]);
      expect(db.replicaStates!()).toEqual([{ name: `127.0.0.1:${replica.port}/app`, usable: true, lagMs: expect.any(Number) }]);
      expect(db.replicaStates!()[0].lagMs).toBeLessThanOrEqual(MAX_LAG_MS);
      // the same data on both: what the primary has, the replica has replayed
      await db.sql('INSERT INTO ticks DEFAULT VALUES');
      await within(2000, 'the row replayed', async () => {
        const [row] = await db.read<{ r: boolean; n: number }>('SELECT pg_is_in_recovery() AS r, count(*)::int AS n FROM ticks');
        return row.r && row.n === 1;
      });
    });

    it('leaves a paused replica out within the lag allowed while the primary writes, never staler than REPLICA_MAX_LAG_MS, and takes it back once resumed', async () => {
      // a session on the replica itself, to pause and resume its replay
      const replicaAdmin = new pg.Client({ connectionString: replicaUrl });
      await replicaAdmin.connect();
      await within(5000, 'the replica taking reads', () => readsFromReplica(db));
      const writes = writer();
      // every read: when it was asked, what it saw, who answered
      const reads: { asked: number; maxId: number; r: boolean }[] = [];
      const read = async () => {
        const asked = Date.now();
        const [row] = await db.read<{ r: boolean; max: string | null }>('SELECT pg_is_in_recovery() AS r, max(id) AS max FROM ticks');
        reads.push({ asked, maxId: Number(row.max ?? 0), r: row.r });
        return row.r;
      };
      let leftOutAfter: number | undefined;
      try {
        await sleep(100);
        await replicaAdmin.query('SELECT pg_wal_replay_pause()');
        leftOutAfter = await within(3000, 'reads leaving the paused replica', async () => !(await read()));
        // and it stays out while paused
        for (let i = 0; i < 30; i++) {
          expect(await read()).toBe(false);
          await sleep(10);
        }
        expect(db.replicaStates!()).toEqual([{ name: `127.0.0.1:${replica.port}/app`, usable: false, lagMs: expect.any(Number) }]);
        expect(db.replicaStates!()[0].lagMs).toBeGreaterThan(MAX_LAG_MS);
      } finally {
        await replicaAdmin.query('SELECT pg_wal_replay_resume()');
        await replicaAdmin.end();
        await writes.stop();
      }
      const back = await within(5000, 'reads back on the resumed replica', () => read());
      // the staleness bound, read by read: a read the replica answered saw every row committed more than REPLICA_MAX_LAG_MS before it was asked
      const fromReplica = reads.filter((x) => x.r);
      expect(fromReplica.length).toBeGreaterThan(0);
      for (const x of reads) {
        const mustSee = writes.commits.filter((c) => c.at < x.asked - MAX_LAG_MS).reduce((max, c) => Math.max(max, c.id), 0);
        expect({ ...x, sawAtLeast: x.maxId >= mustSee }).toEqual({ ...x, sawAtLeast: true });
      }
      // the replay paused, the replica is left out after at most the lag allowed and one monitor round
      // (and a second of slack for a loaded machine: the bound that matters, staleness, is checked read by read above)
      expect(leftOutAfter).toBeLessThan(MAX_LAG_MS + INTERVAL_MS + 1000);
      expect(back).toBeLessThan(5000);
      expect(writes.commits.length).toBeGreaterThan(10);
    });

    it('a read issued REPLICA_MAX_LAG_MS after a write always sees it (20 times), mostly from the replica', async () => {
      await within(5000, 'the replica taking reads', () => readsFromReplica(db));
      const answers: { seenAtOnce: boolean; seenLater: boolean; laterFromReplica: boolean }[] = [];
      for (let i = 0; i < 20; i++) {
        const [{ id }] = await db.sql<{ id: string }>('INSERT INTO ticks DEFAULT VALUES RETURNING id');
        // at once: seen or not (not yet replayed), both allowed
        const [atOnce] = await db.read<{ n: number }>('SELECT count(*)::int AS n FROM ticks WHERE id = $1', [id]);
        await sleep(MAX_LAG_MS);
        const [later] = await db.read<{ n: number; r: boolean }>('SELECT count(*)::int AS n, pg_is_in_recovery() AS r FROM ticks WHERE id = $1', [id]);
        answers.push({ seenAtOnce: atOnce.n === 1, seenLater: later.n === 1, laterFromReplica: later.r });
      }
      expect(answers.filter((a) => !a.seenLater)).toEqual([]);
      // not vacuous: the replica answered many of them (most, unless the machine is very busy)
      expect(answers.filter((a) => a.laterFromReplica).length).toBeGreaterThanOrEqual(5);
    });

    it('loses no read when the replica stops (pg_ctl stop -m immediate), and reads go back to it once it runs again', async () => {
      await within(5000, 'the replica taking reads', () => readsFromReplica(db));
      logged.calls.length = 0;
      const answers: { r: boolean; n: number }[] = [];
      const failures: unknown[] = [];
      let stopping: Promise<void> | undefined;
      let stoppedAt = -1;
      const [{ n: rows }] = await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM ticks');
      for (let i = 0; i < 200; i++) {
        if (i === 20)
          stopping = replica.stop('immediate').then(() => {
            stoppedAt = answers.length;
          });
        try {
          const rows = await db.read<{ r: boolean; n: number }>('SELECT pg_is_in_recovery() AS r, count(*)::int AS n FROM ticks');
          answers.push(rows[0]);
        } catch (err) {
          failures.push(err);
        }
        await sleep(5);
      }
      await stopping;
      expect(failures).toEqual([]);
      expect(answers).toHaveLength(200);
      // it was taking reads when it stopped
      expect(answers.slice(0, 20).some((a) => a.r)).toBe(true);
      // once stopped, all from the primary, with the same rows
      expect(stoppedAt).toBeGreaterThan(0);
      expect(stoppedAt).toBeLessThan(200);
      expect(answers.slice(stoppedAt).every((a) => !a.r)).toBe(true);
      expect(answers.filter((a) => a.n !== rows)).toEqual([]);
      expect(db.replicaStates!()).toEqual([{ name: `127.0.0.1:${replica.port}/app`, usable: false, lagMs: null }]);
      expect(logged.calls.filter((c) => c.level === 'warn').map((c) => c.msg)).toEqual([expect.stringMatching(/^read replica left out: (a read lost its connection|unreachable); reads go to the primary$/)]);

      await replica.start();
      const back = await within(10_000, 'reads back on the restarted replica', () => readsFromReplica(db));
      expect(back).toBeLessThan(10_000);
      expect(logged.calls.filter((c) => c.level === 'info').map((c) => c.msg)).toEqual(['read replica reachable again']);
    });

    it('loses no read when the replica freezes (SIGSTOP: connections open, nothing answers): a read waiting on it runs again on the primary', async () => {
      await within(5000, 'the replica taking reads', () => readsFromReplica(db));
      logged.calls.length = 0;
      // the postmaster and every process of it (backends, the WAL receiver, ...), when it freezes
      const postmaster = Number(readFileSync(path.join(replica.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      let pids: number[] = [];
      const timed = async (sql: string) => {
        const started = Date.now();
        const [row] = await db.read<{ r: boolean }>(sql);
        return { r: row.r, ms: Date.now() - started };
      };
      let inFlight: Promise<{ r: boolean; ms: number }> | undefined;
      const during: { r: boolean; ms: number }[] = [];
      let frozen = false;
      const thaw = () => {
        if (frozen) for (const pid of pids) process.kill(pid, 'SIGCONT');
        frozen = false;
      };
      // whatever happens, it thaws after 6 s (a read stuck on it then answers late, and the checks say so)
      const safety = setTimeout(thaw, 6000);
      try {
        // a read on the replica when it freezes: without a way out it would wait for ever
        inFlight = timed('SELECT pg_is_in_recovery() AS r, pg_sleep(0.3)');
        await sleep(50);
        pids = [postmaster, ...execFileSync('pgrep', ['-P', String(postmaster)]).toString().trim().split('\n').filter(Boolean).map(Number)];
        frozen = true;
        for (const pid of pids) process.kill(pid, 'SIGSTOP');
        const first = await inFlight;
        // it ran again on the primary once the monitor left the replica out (its question unanswered for 1 s)
        expect(first.r).toBe(false);
        expect(first.ms).toBeLessThan(3000);
        expect(logged.calls.filter((c) => c.level === 'warn').map((c) => c.msg)).toEqual([
          expect.stringMatching(/^read replica left out: (it did not answer within 1000 ms|unreachable); reads go to the primary$/),
        ]);
        // and the reads that follow go to the primary at once
        for (let i = 0; i < 15; i++) {
          during.push(await timed(WHO));
          await sleep(20);
        }
        expect(during.filter((d) => d.r || d.ms > 500)).toEqual([]);
        expect(db.replicaStates!()).toEqual([{ name: `127.0.0.1:${replica.port}/app`, usable: false, lagMs: null }]);
      } finally {
        clearTimeout(safety);
        thaw();
        await inFlight?.catch(() => {});
      }
      const back = await within(10_000, 'reads back on the thawed replica', () => readsFromReplica(db));
      expect(back).toBeLessThan(10_000);
    });

    it('never reads from a replica URL that is not a standby (the primary itself); its state says unusable', async () => {
      const log = collectingLog();
      // the same server under two names: application_name tells which of the Db's pools answered
      const wrong = await createDb({ databaseUrl: primaryUrl, replicaUrls: [`${primaryUrl}?application_name=as_replica`], replicaMaxLagMs: MAX_LAG_MS, poolSize: 2, log: log.log });
      opened.push(wrong);
      const answeredBy = async () => (await wrong.read<{ name: string }>("SELECT current_setting('application_name') AS name"))[0].name;
      // from the first read on (before the monitor has looked at it), then over several of its rounds
      const names = new Set<string>();
      for (let i = 0; i < 40; i++) {
        names.add(await answeredBy());
        await sleep(10);
      }
      expect([...names]).toEqual(['']);
      expect(wrong.replicaStates!()).toEqual([{ name: `127.0.0.1:${primary.port}/app`, usable: false, lagMs: null }]);
      expect(log.calls).toEqual([{ level: 'warn', msg: 'read replica left out: it is not a streaming standby; reads go to the primary' }]);
      // (the same replica pool does answer as_replica: the check above could tell)
      const direct = new pg.Client({ connectionString: `${primaryUrl}?application_name=as_replica` });
      await direct.connect();
      expect((await direct.query("SELECT current_setting('application_name') AS name")).rows).toEqual([{ name: 'as_replica' }]);
      await direct.end();
    });

    it('serves the audit log from the replica as the server wires it (REPLICA_MAX_LAG_MS=2000), and shows it on /readyz and /metrics', async () => {
      // a database of its own (the replica has it too: CREATE DATABASE is replayed like the rest)
      const servedUrl = await primary.createDatabase('served');
      const servedReplicaUrl = `postgresql://postgres@127.0.0.1:${replica.port}/served`;
      const setup = await createDb({ databaseUrl: servedUrl, poolSize: 2 });
      opened.push(setup);
      await migrate(setup);
      const [{ id: accountId }] = await setup.sql<{ id: string }>("INSERT INTO accounts (name) VALUES ('replica-readers') RETURNING id");
      const email = 'auditor@example.com';
      const password = 'replica-auditor-password';
      await setup.sql("INSERT INTO users (account_id, name, email, email_key, role, password_hash) VALUES ($1, 'Auditor', $2, $2, 'admin', $3)", [accountId, email, await hashPassword(password)]);
      const audit = async (label: string) =>
        Number(
          (
            await setup.sql<{ id: string }>(
              `INSERT INTO audit_logs (account_id, actor_name, action, source_type, source_id, source_label, changed_fields, change_description, via, request_id, ip_address)
               VALUES ($1, 'System', 'create', 'oauth_client', 1, $2, '{}'::text[], $2, 'api', $2, '127.0.0.1') RETURNING id`,
              [accountId, label],
            )
          )[0].id,
        );
      const before = await audit('before the pause');

      // as src/main.ts builds the server: the configuration from the environment, createDb, servicesFor, buildApp
      const config = loadConfig({ DATABASE_URL: servedUrl, READ_REPLICA_URL: servedReplicaUrl, REPLICA_MAX_LAG_MS: '2000', HASH_KEY: 'replica-test-hash-key-0123456789abcdef', DATA_DIR: '/nonexistent' });
      const served = await createDb({ ...databaseConnection(config), poolSize: 4 });
      opened.push(served);
      const { fastify } = await buildApp({ db: served, services: servicesFor(served, config), config, logger: false });
      try {
        const auditLog = async () => {
          const res = await fastify.inject({ method: 'GET', url: '/api/v2/audit_logs.json', headers: { authorization: basicHeader(email, password) } });
          expect(res.statusCode).toBe(200);
          return (res.json() as { audit_logs: { id: number }[] }).audit_logs.map((l) => l.id);
        };
        await within(5000, 'the replica taking reads', () => readsFromReplica(served));
        expect(await auditLog()).toEqual([before]);
        const name = `127.0.0.1:${replica.port}/served`;
        const ready = (await fastify.inject({ method: 'GET', url: '/readyz' })).json();
        expect(ready).toMatchObject({ status: 'ready', replicas: [{ name, usable: true, lag_ms: expect.any(Number) }] });
        expect(ready.replicas[0].lag_ms).toBeLessThanOrEqual(2000);
        const scrape = (await fastify.inject({ method: 'GET', url: '/metrics' })).body;
        expect(scrape).toContain(`db_replica_usable{replica="${name}"} 1`);
        expect(Number(new RegExp(`^db_replica_lag_seconds\\{replica="${name.replace(/\./g, '\\.')}"\\} (\\S+)$`, 'm').exec(scrape)?.[1])).toBeLessThanOrEqual(2);

        // replay paused: a record written now is not in the log while the replica may still answer (2 s),
        // though signing in (on the primary) works; past the lag allowed the primary answers, with it
        const replicaAdmin = new pg.Client({ connectionString: servedReplicaUrl });
        await replicaAdmin.connect();
        try {
          await replicaAdmin.query('SELECT pg_wal_replay_pause()');
          const during = await audit('during the pause');
          const paused = Date.now();
          expect(await auditLog()).toEqual([before]);
          expect(Date.now() - paused).toBeLessThan(1500);
          await within(4000, 'the paused replica left out', async () => !served.replicaStates!()[0].usable);
          expect(await auditLog()).toEqual([during, before]);
          expect((await fastify.inject({ method: 'GET', url: '/readyz' })).json().replicas).toEqual([{ name, usable: false, lag_ms: expect.any(Number) }]);
          expect((await fastify.inject({ method: 'GET', url: '/metrics' })).body).toContain(`db_replica_usable{replica="${name}"} 0`);
        } finally {
          await replicaAdmin.query('SELECT pg_wal_replay_resume()');
          await replicaAdmin.end();
        }
        await within(5000, 'the resumed replica taking reads', () => readsFromReplica(served));
      } finally {
        await fastify.close();
      }
    });
  },
);
