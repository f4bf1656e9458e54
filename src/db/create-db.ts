import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { acquireDirLock, type DirLock } from './dir-lock';
import { MIGRATION_LOCK_KEY } from './advisory-locks';

/**
 * Plain SQL with $1.. parameters: every statement of the service (it runs no Prisma client).
 * On PostgreSQL each distinct text becomes a named prepared statement on every
 * connection that runs it, so the server parses and plans it once per connection,
 * not once per request. Texts must therefore come from a fixed set of templates
 * (values always go in parameters, never into the text).
 */
export type SqlQuery = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

export interface Db {
  kind: 'postgres' | 'pglite';
  sql: SqlQuery;
  /** An adapter factory for the schema engine (migrations, diff). */
  migrationFactory(): SqlMigrationAwareDriverAdapterFactory;
  /** Runs fn while holding a lock that serialises migrations across processes. */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Runs fn on one connection between BEGIN and COMMIT (ROLLBACK when it throws),
   * without Prisma's interactive-transaction machinery, for hot paths. `first`, a
   * statement without parameters, travels with BEGIN in the same round trip.
   */
  transaction<T>(fn: (sql: SqlQuery) => Promise<T>, first?: string): Promise<T>;
  /**
   * Calls `onNotify` for every NOTIFY on `channel` (delivered when the notifying
   * transaction commits), and once more after a lost connection is back (notifications
   * sent meanwhile are gone: the listener looks again). On PostgreSQL it holds a
   * connection of its own, outside the pool. Resolves to a function that stops it.
   * `payload`: the notification's (absent on the call after a reconnection). `onNotify` must
   * not throw: it runs inside the connection's event handlers.
   */
  listen(channel: string, onNotify: (payload?: string) => void): Promise<() => Promise<void>>;
  /** SQL statements sent so far, for the N+1 tests and bench mode; 0 unless countStatements was set. */
  statementCount(): number;
  /** PostgreSQL: the pool's connections now (read-only, for /metrics); absent on PGlite, which has no pool. */
  poolStats?(): PoolStats;
  close(): Promise<void>;
}

export interface PoolStats {
  /** connections open (idle or lent out) */
  total: number;
  idle: number;
  /** queries and transactions waiting for a connection */
  waiting: number;
  /** DB_POOL_SIZE */
  max: number;
}

/** Where the connections of their own (LISTEN, the migration lock) say they lost the server (once per loss) and got it back. */
type DbLog = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

export interface DbOptions {
  /** postgresql://… ; absent = embedded PGlite */
  databaseUrl?: string;
  /** folder of the embedded database; ':memory:' for a throwaway one */
  dataDir?: string;
  poolSize?: number;
  /** count the statements sent (statementCount): tests and BENCH_MODE; off, nothing wraps the driver */
  countStatements?: boolean;
  /** an in-memory PGlite starts from this copy of a database (dumpDataDir's): a migrated template in a second, not an initdb and migrations in three */
  loadDataDir?: Blob;
  /** PostgreSQL: where LISTEN sessions and the migration lock say they lost their connection (the server's logger) */
  log?: DbLog;
}

/** The embedded database's own extras. */
export interface PgliteDb extends Db {
  kind: 'pglite';
  /** A copy of the whole database (a tar of its folder), which loadDataDir starts another from. */
  dumpDataDir(): Promise<Blob>;
}

// Distinct SQL texts prepared per connection, at most: past it, a text runs as an
// unnamed statement (parsed every time), so a template bug cannot exhaust the
// server's memory. The service has a few dozen.
const MAX_PREPARED_STATEMENTS = 200;

/**
 * pg query configs that name each distinct text (s1, s2, …). A name always means
 * the same text in this process, which is what pg requires of a name on a connection.
 */
function preparedStatements(max = MAX_PREPARED_STATEMENTS) {
  const names = new Map<string, string>();
  return (text: string, values: unknown[] | undefined): pg.QueryConfig => {
    let name = names.get(text);
    if (name === undefined && names.size < max) names.set(text, (name = `s${names.size + 1}`));
    return name === undefined ? { text, values } : { name, text, values };
  };
}

export async function createDb(options: DbOptions & { databaseUrl?: undefined; dataDir: ':memory:' }): Promise<PgliteDb>;
export async function createDb(options: DbOptions): Promise<Db>;
export async function createDb(options: DbOptions): Promise<Db> {
  const count = options.countStatements ?? false;
  return options.databaseUrl ? createPostgresDb(options.databaseUrl, options.poolSize ?? 10, count, options.log) : createPgliteDb(options.dataDir ?? '.data', count, options.loadDataDir);
}

async function createPostgresDb(url: string, poolSize: number, countStatements: boolean, log?: DbLog): Promise<Db> {
  let statements = 0;
  // Every statement of the pool goes through Client#query.
  class CountingClient extends pg.Client {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's query has a dozen overloads; this only counts
    query(...args: any[]): any {
      statements++;
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return (super.query as any)(...args);
    }
  }
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5000, Client: countStatements ? CountingClient : pg.Client });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const prepared = preparedStatements();
  return {
    kind: 'postgres',
    sql: async (text, params) => (await pool.query(prepared(text, params))).rows,
    migrationFactory: () => wholeScripts(new PrismaPg({ connectionString: url, max: 2 })),
    statementCount: () => statements,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: poolSize }),
    async transaction(fn, first) {
      let broken: Error | undefined;
      // A checked-out client has no pool listener: the server ending the session between
      // two statements (a restart, pg_ctl stop) would be an unhandled 'error' event, which
      // ends the process. Noted here, the next statement fails and the client is dropped.
      const onError = (e: Error) => (broken = e);
      // Attached in pool.connect's callback, which the pool calls the moment it removes its
      // own listener: `await pool.connect()` would attach it a few microtasks later, and the
      // pool hands a connection over while pg still parses that connection's last read (the
      // ReadyForQuery that ended the previous statement, or a new connection's first one).
      // A FATAL in the same read (the server stopping right after answering; one read on a
      // loaded machine) was then emitted with no listener, and the process died of it.
      const client = await new Promise<pg.PoolClient>((resolve, reject) =>
        pool.connect((err, connected) => {
          if (err || !connected) return reject(err ?? new Error('the pool gave no connection'));
          connected.on('error', onError);
          resolve(connected);
        }),
      );
      try {
        // Without parameters, "BEGIN; <first>" is one simple-protocol query.
        await client.query(first ? `BEGIN; ${first}` : 'BEGIN');
        const result = await fn(async (text, params) => (await client.query(prepared(text, params))).rows);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        // A connection that cannot even roll back is dropped from the pool.
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async withMigrationLock(fn) {
      const client = new pg.Client({ connectionString: url });
      // the session ended by the server (an outage while migrating) is an 'error' event: with no
      // listener it would end the process rather than fail the start; its statements fail too
      client.on('error', (err) => log?.warn({ err }, 'migration lock: connection lost'));
      await client.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        return await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
        await client.end().catch(() => {});
      }
    },
    listen: (channel, onNotify) => listenOn(url, channel, onNotify, log),
    async close() {
      await pool.end().catch(() => {});
    },
  };
}

const LISTEN_RETRY_MS = 1000;

/** A LISTEN session of its own (never a pooled one: a transaction pooler would hand it to others), reconnected when lost. */
async function listenOn(url: string, channel: string, onNotify: (payload?: string) => void, log?: DbLog): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  /** the connection is lost and being retried (said once, when it was lost) */
  let down = false;
  // `first`: the caller's listen() call, whose failure is the caller's (it rejects; the
  // engine does not start, a subscriber is refused): nothing retries it. Once it listened,
  // a lost connection is retried every LISTEN_RETRY_MS until it is back or stopped.
  const connect = async (first: boolean): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    let listening = false;
    const lost = (err?: Error) => {
      if (client !== next) return;
      client = undefined;
      void next.end().catch(() => {});
      // a first connection that never listened: listen() rejects, and that is all (a retry
      // scheduled here would LISTEN later on a connection nobody could end)
      if (stopped || (first && !listening)) return;
      if (!down) log?.warn({ err, channel }, 'LISTEN: connection lost; reconnecting every second');
      down = true;
      retry = setTimeout(reconnect, LISTEN_RETRY_MS);
    };
    next.on('error', lost);
    next.on('end', () => lost());
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload);
    });
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
    } catch (err) {
      lost(err as Error);
      throw err;
    }
    // lost (or stopped) while its LISTEN was answered: not listening
    if (client !== next) throw new Error(`LISTEN "${channel}": the connection was lost while it started`);
    listening = true;
  };
  const reconnect = () => {
    connect(false).then(
      () => {
        if (down) log?.info({ channel }, 'LISTEN: reconnected');
        down = false;
        // what was notified meanwhile is gone: the listener looks again
        onNotify();
      },
      // lost() has scheduled the next attempt (or it was stopped); the loss was logged once
      () => {},
    );
  };
  await connect(true);
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const last = client;
    client = undefined;
    await last?.end().catch(() => {});
  };
}

/**
 * @prisma/adapter-pg runs a migration script by cutting it at every ';', those in
 * comments and in dollar-quoted function bodies included, which breaks any
 * migration that creates a PL/pgSQL function. Sent whole as one simple-protocol
 * query, the script is parsed by PostgreSQL itself (and runs as one implicit
 * transaction: a migration that fails leaves nothing half-applied). Errors still
 * go through the adapter's own mapping, which the engine expects.
 */
function wholeScripts(factory: PrismaPg): SqlMigrationAwareDriverAdapterFactory {
  type PgAdapter = SqlDriverAdapter & { underlyingDriver(): pg.Pool; onError(error: unknown): never };
  const patched = async (connecting: Promise<SqlDriverAdapter>) => {
    const adapter = (await connecting) as PgAdapter;
    adapter.executeScript = async (script: string) => {
      try {
        await adapter.underlyingDriver().query(script);
      } catch (err) {
        adapter.onError(err);
      }
    };
    return adapter;
  };
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: () => patched(factory.connect()),
    connectToShadowDb: () => patched(factory.connectToShadowDb()),
  };
}

async function createPgliteDb(dataDir: string, countStatements: boolean, loadDataDir?: Blob): Promise<PgliteDb> {
  const { PGlite } = await import('@electric-sql/pglite');
  let lock: DirLock | undefined;
  let client: InstanceType<typeof PGlite>;
  type Transaction = Parameters<Parameters<typeof client.transaction>[0]>[0];
  if (dataDir === ':memory:') {
    client = new PGlite(loadDataDir ? { loadDataDir } : {});
    // started here, like the file database below: the first query must not pay for it
    // (a loaded machine took over /readyz's 2 s to start one inside its first SELECT 1)
    await client.waitReady;
  } else {
    mkdirSync(dataDir, { recursive: true });
    // PGlite is one process's database: a second opener would corrupt it.
    lock = acquireDirLock(dataDir);
    try {
      client = new PGlite(path.join(dataDir, 'pglite'));
      await client.waitReady;
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  // Count what is sent, as PostgreSQL's count does: the
  // statements of a transaction (they go through its own object, not client.query)
  // with its BEGIN and its COMMIT or ROLLBACK, so that an N+1 inside a transaction
  // shows here too, with the same figures as on PostgreSQL.
  let statements = 0;
  const rawTransaction = client.transaction.bind(client);
  if (countStatements) {
    const counted = <A extends unknown[], R>(f: (...args: A) => Promise<R>) => (...args: A) => {
      statements++;
      return f(...args);
    };
    client.query = counted(client.query.bind(client)) as typeof client.query;
    // Prisma's interactive and batch transactions (pglite-prisma-adapter calls client.transaction)
    client.transaction = (<T>(fn: (tx: Transaction) => Promise<T>) => {
      statements++; // BEGIN
      return rawTransaction((tx) => {
        tx.query = counted(tx.query.bind(tx)) as typeof tx.query;
        tx.exec = counted(tx.exec.bind(tx)) as typeof tx.exec;
        return fn(tx);
      }).finally(() => statements++); // COMMIT or ROLLBACK
    }) as typeof client.transaction;
  }
  return {
    statementCount: () => statements,
    // on PostgreSQL `first` travels with BEGIN as one statement: counted so here too
    async transaction(fn, first) {
      if (countStatements) statements += 2; // BEGIN (with `first`), COMMIT or ROLLBACK
      return rawTransaction(async (tx) => {
        if (first) await tx.exec(first);
        return fn(async (text, params) => {
          if (countStatements) statements++;
          return (await tx.query(text, params as unknown[])).rows as never;
        });
      });
    },
    kind: 'pglite',
    sql: async (text, params) => (await client.query(text, params as unknown[])).rows as never,
    migrationFactory: () => new PrismaPGlite(client),
    withMigrationLock: (fn) => fn(),
    dumpDataDir: () => client.dumpDataDir('none'),
    listen: async (channel, onNotify) => {
      const unlisten = await client.listen(channel, (payload) => onNotify(payload));
      return async () => {
        await unlisten().catch(() => {});
      };
    },
    async close() {
      await client.close().catch(() => {});
      lock?.release();
    },
  };
}
