// A real pgbouncer (1.18, Debian's /usr/sbin/pgbouncer) of a test's own in pool_mode=transaction,
// in front of a PgServer (test/helpers/pg-server.ts), on a free loopback port with its
// config, log and pid file in a temporary folder. Every database of the server is reachable
// through it under its own name, as user postgres without a password (auth_type trust).
// It refuses to run as root: when the tests run as root it is started with -u postgres.
// stop()/start() keep the port and the folder; cleanup() stops it and removes the folder,
// and also runs when the test process exits.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { PgServer } from './pg-server';
import { freePort } from './processes';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface PgBouncer {
  port: number;
  /** postgresql://postgres@127.0.0.1:<port>/<database>, through the pooler (no ?pgbouncer=true on it) */
  url(database: string): string;
  /** SIGTERM (1.18: immediate shutdown, every client connection closed) */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Stops it if running and removes its folder. Safe to call twice. */
  cleanup(): Promise<void>;
  /** its log so far (for failure messages) */
  log(): string;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

const live = new Set<() => void>();
process.on('exit', () => {
  for (const stopNow of live) stopNow();
});

/** Connects until the pooler answers a query (it listens a moment after it is spawned). */
async function waitUntilServing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`pgbouncer exited (${child.exitCode ?? child.signalCode}) at start:\n${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > until) throw new Error(`pgbouncer did not serve within 10 s: ${(err as Error).message}\n${log()}`, { cause: err });
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/**
 * pgbouncer in transaction mode in front of `server`: at most `serverConnections` server
 * connections per database (default_pool_size), so that a burst of clients shares them.
 */
export async function startPgBouncer(server: PgServer, options: { serverConnections?: number } = {}): Promise<PgBouncer> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'pgbouncer-'));
  chmodSync(work, 0o755);
  const port = await freePort();
  const logFile = path.join(work, 'pgbouncer.log');
  const config = path.join(work, 'pgbouncer.ini');
  const userlist = path.join(work, 'userlist.txt');
  // trust: no password is checked, but the user must be listed
  writeFileSync(userlist, '"postgres" ""\n');
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = trust',
      `auth_file = ${userlist}`,
      `logfile = ${logFile}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.serverConnections ?? 3}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  for (const file of [config, userlist]) chmodSync(file, 0o644);
  // pgbouncer writes its log into the folder as the user it runs as
  if (asRoot) execFileSync('chown', ['-R', 'postgres', work]);

  let child: ChildProcess | undefined;
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const killNow = () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const stopNow = () => {
    killNow();
    rmSync(work, { recursive: true, force: true });
  };
  live.add(stopNow);

  const bouncer: PgBouncer = {
    port,
    url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      const spawned = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), config], { stdio: 'ignore' });
      child = spawned;
      await waitUntilServing(bouncer.url('postgres'), spawned, log);
    },
    async stop() {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      const timer = setTimeout(() => running.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
    async cleanup() {
      if (!live.has(stopNow)) return;
      live.delete(stopNow);
      await bouncer.stop();
      rmSync(work, { recursive: true, force: true });
    },
    log,
  };
  try {
    await bouncer.start();
  } catch (err) {
    await bouncer.cleanup();
    throw err;
  }
  return bouncer;
}
