import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { acquireDirLock, type DirLock } from './dir-lock';
import { MIGRATION_LOCK_KEY } from './advisory-locks';
import { replicaRouter, type ReplicaState } from './replicas';

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
  /**
   * A read that may be answered by a read replica (READ_REPLICA_URL) no further behind than
   * REPLICA_MAX_LAG_MS, else by the primary: only for the reads docs/scaling.md lists (the audit
   * log, the voice dashboards), never for authentication, revocation, rate limits or a read that
   * decides a write. Without replicas (and on PGlite) it is `sql`.
   */
  read: SqlQuery;
  /** the read replicas now (for /readyz and /metrics); absent without READ_REPLICA_URL */
  replicaStates?(): ReplicaState[];
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
  /**
   * postgresql://… ; absent = embedded PGlite. `?pgbouncer=true` on it says it is a transaction
   * pooler (pgbouncer in pool_mode=transaction, or a managed one): no named prepared statements
   * and no session state go through it (then directUrl is required).
   */
  databaseUrl?: string;
  /** the primary itself, never pooled: migrations and their lock, LISTEN; defaults to databaseUrl when that is not pooled */
  directUrl?: string;
  /** streaming replicas for the reads of `Db.read` (each may carry ?pgbouncer=true too) */
  replicaUrls?: readonly string[];
  /** a replica further behind the primary than this is left out (ms; REPLICA_MAX_LAG_MS) */
  replicaMaxLagMs?: number;
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

// What PostgreSQL answers when a named statement met a server connection it was not
// prepared on, or one where another client prepared it: the mark of a transaction pooler.
const POOLER_STATEMENT_ERRORS = new Set(['42P05' /* already exists */, '26000' /* does not exist */]);

/**
 * How statements are sent: on a direct connection, each distinct text gets a name (s1, s2, …;
 * a name always means the same text in this process, which is what pg requires of a name on
 * a connection) and is prepared once per connection; behind a transaction pooler
 * (?pgbouncer=true), unnamed. A pooler the URL did not flag shows itself by the errors above:
 * then it is said once, loudly, and every statement from then on is unnamed (the one that
 * failed runs again, unnamed, when it was not inside a transaction), instead of half the
 * answers failing.
 */
class Statements {
  private readonly names = new Map<string, string>();
  constructor(
    private named: boolean,
    private readonly onPooler: () => void,
    private readonly max = MAX_PREPARED_STATEMENTS,
  ) {}

  config(text: string, values: unknown[] | undefined): pg.QueryConfig {
    if (!this.named) return { text, values };
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.max) this.names.set(text, (name = `s${this.names.size + 1}`));
    return name === undefined ? { text, values } : { name, text, values };
  }

  /** Whether a named statement failed because of a transaction pooler (from now on, none is named). */
  poolerRefused(config: pg.QueryConfig, err: unknown): boolean {
    const code = (err as { code?: unknown } | null)?.code;
    if (config.name === undefined || typeof code !== 'string' || !POOLER_STATEMENT_ERRORS.has(code)) return false;
    if (this.named) {
      this.named = false;
      this.onPooler();
    }
    return true;
  }

  /** Runs one statement outside a transaction: again, unnamed, if a pooler refused its name. */
  async run(query: (config: pg.QueryConfig) => Promise<pg.QueryResult>, text: string, values: unknown[] | undefined): Promise<never[]> {
    const config = this.config(text, values);
    try {
      return (await query(config)).rows as never[];
    } catch (err) {
      if (!this.poolerRefused(config, err)) throw err;
      return (await query({ text, values })).rows as never[];
    }
  }
}

/**
 * A connection URL and whether it points at a transaction pooler: `?pgbouncer=true` (Prisma's
 * convention) says so, and is taken off (the server knows no such parameter).
 */
export function poolerUrl(url: string): { url: string; pooled: boolean } {
  const at = url.indexOf('?');
  if (at < 0) return { url, pooled: false };
  // (the query alone: URLSearchParams takes any text, where the WHATWG URL parser refuses
  // some URLs pg takes, such as an empty host with a socket directory in ?host=)
  const params = new URLSearchParams(url.slice(at + 1));
  const flag = params.get('pgbouncer');
  if (flag === null) return { url, pooled: false };
  params.delete('pgbouncer');
  const rest = params.toString();
  return { url: url.slice(0, at) + (rest ? `?${rest}` : ''), pooled: flag === 'true' };
}

/**
 * What is wrong with this pair of connection URLs, if anything: a pooled DATABASE_URL needs
 * DIRECT_URL, and DIRECT_URL must reach the primary itself. The one rule, for loadConfig (which
 * names the variable before connecting) and for createDb (callers that build a Db without it).
 */
export function connectionProblem(databaseUrl: string, directUrl: string | undefined): string | undefined {
  if (directUrl !== undefined && poolerUrl(directUrl).pooled) {
    return 'DIRECT_URL must reach the primary itself, not a pooler: remove ?pgbouncer=true (migrations and LISTEN need a session of their own)';
  }
  if (directUrl === undefined && poolerUrl(databaseUrl).pooled) {
    return 'DIRECT_URL is required when DATABASE_URL is a transaction pooler (?pgbouncer=true): set it to the primary itself (migrations hold a session lock, LISTEN holds a session; neither survives transaction pooling)';
  }
  return undefined;
}

/** host:port/database of a URL, for logs (never its user or password). */
function describeUrl(url: string, index: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return `replica ${index + 1}`;
  }
}

/** How long close() waits for a replica's connections (one frozen mid-read never ends by itself). */
const REPLICA_CLOSE_MS = 1000;

/** How often a process waiting for the migration lock says so. */
const MIGRATION_LOCK_LOG_MS = 10_000;

export async function createDb(options: DbOptions & { databaseUrl?: undefined; dataDir: ':memory:' }): Promise<PgliteDb>;
export async function createDb(options: DbOptions): Promise<Db>;
export async function createDb(options: DbOptions): Promise<Db> {
  const count = options.countStatements ?? false;
  return options.databaseUrl ? createPostgresDb({ ...options, databaseUrl: options.databaseUrl }, count) : createPgliteDb(options.dataDir ?? '.data', count, options.loadDataDir);
}

/** The pool of one server (or of a pooler in front of it), and how its statements are named. */
function serverPool(target: string, variable: string, max: number, client: typeof pg.Client, log?: DbLog, connectionTimeoutMillis = 5000) {
  const { url, pooled } = poolerUrl(target);
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis, Client: client });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const statements = new Statements(!pooled, () =>
    log?.warn(
      { variable },
      `${variable} looks like a transaction pooler (a named prepared statement met another session): statements are unnamed from now on; add ?pgbouncer=true to ${variable}, and set DIRECT_URL to the primary itself (docs/scaling.md)`,
    ),
  );
  const sql: SqlQuery = (text, params) => statements.run((config) => pool.query(config), text, params);
  return { pool, statements, sql };
}

async function createPostgresDb(options: DbOptions & { databaseUrl: string }, countStatements: boolean): Promise<Db> {
  const { log } = options;
  const poolSize = options.poolSize ?? 10;
  const problem = connectionProblem(options.databaseUrl, options.directUrl || undefined);
  if (problem) throw new Error(problem);
  // migrations, their lock and LISTEN hold a session: on the primary itself, never through a pooler
  const { url } = poolerUrl(options.directUrl || options.databaseUrl);
  let statementsSent = 0;
  // Every statement of the pool goes through Client#query.
  class CountingClient extends pg.Client {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's query has a dozen overloads; this only counts
    query(...args: any[]): any {
      statementsSent++;
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return (super.query as any)(...args);
    }
  }
  const { pool, statements, sql } = serverPool(options.databaseUrl, 'DATABASE_URL', poolSize, countStatements ? CountingClient : pg.Client, log);
  // replicas: a short connect timeout, so that an unreachable one falls back to the primary quickly
  const replicas = options.replicaUrls?.length
    ? replicaRouter(
        sql,
        options.replicaUrls.map((replicaUrl, index) => {
          const replica = serverPool(replicaUrl, 'READ_REPLICA_URL', poolSize, countStatements ? CountingClient : pg.Client, log, 1000);
          return {
            name: describeUrl(replicaUrl, index),
            sql: replica.sql,
            // a frozen replica's abandoned reads keep their connections, and pool.end() waits for
            // them: the process stops anyway after a second (they die with it)
            close: () => Promise.race([replica.pool.end().catch(() => {}), new Promise<void>((resolve) => setTimeout(resolve, REPLICA_CLOSE_MS).unref())]),
          };
        }),
        { maxLagMs: options.replicaMaxLagMs ?? 1000, log },
      )
    : undefined;
  return {
    kind: 'postgres',
    sql,
    read: replicas?.read ?? sql,
    replicaStates: replicas?.states,
    migrationFactory: () => wholeScripts(new PrismaPg({ connectionString: url, max: 2 })),
    statementCount: () => statementsSent,
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
        const result = await fn(async (text, params) => {
          const config = statements.config(text, params);
          try {
            return (await client.query(config)).rows;
          } catch (err) {
            // (not run again: the transaction is aborted; the next ones go unnamed)
            statements.poolerRefused(config, err);
            throw err;
          }
        });
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
        const [{ locked }] = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK_KEY])).rows;
        if (!locked) {
          // another process migrates (or a session holds the lock): said now, and every 10 s until it is ours
          const started = Date.now();
          const waiting = () => log?.info({ waitedSeconds: Math.round((Date.now() - started) / 1000) }, 'waiting for the migration lock: another process is migrating');
          waiting();
          const timer = setInterval(waiting, MIGRATION_LOCK_LOG_MS);
          try {
            await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
          } finally {
            clearInterval(timer);
          }
        }
        return await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
        await client.end().catch(() => {});
      }
    },
    listen: (channel, onNotify) => listenOn(url, channel, onNotify, log),
    async close() {
      await replicas?.close();
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
  const sql: SqlQuery = async (text, params) => (await client.query(text, params as unknown[])).rows as never;
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
    sql,
    read: sql,
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
