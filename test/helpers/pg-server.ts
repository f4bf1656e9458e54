// A throwaway PostgreSQL 15 server of a test's own, on a free loopback port in a
// temporary folder (the approach of .ci/run): fault tests stop and restart it, so it
// cannot be the shared one. Runs as user `postgres` when the tests run as root (the
// server refuses root). stop()/start() keep the port and the data folder; cleanup()
// stops it and removes everything, and also runs when the test process exits.
// startReplica makes a streaming replica (hot standby) of one, the same way, on a port of
// its own (test/db.replicas.test.ts).
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './processes';

export type StopMode = 'smart' | 'fast' | 'immediate';

export interface PgServer {
  port: number;
  /** postgresql://postgres@127.0.0.1:<port>/postgres */
  adminUrl: string;
  dataDir: string;
  running: boolean;
  /** Creates a database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** pg_ctl stop; `immediate` is a crash (recovery at the next start), `fast` a clean shutdown that ends sessions. */
  stop(mode?: StopMode): Promise<void>;
  /** Starts it again on the same port and data folder; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Stops it (immediate) if running and removes its folder. Safe to call twice. */
  cleanup(): Promise<void>;
  /** The server's log so far (for failure messages). */
  log(): string;
}

function pgBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const bin = path.join(base, v, 'bin');
    if (existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)');
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Runs a PostgreSQL program, as user postgres when we are root. */
function runPg(bin: string, args: string[], timeoutMs = 60_000): Promise<string> {
  const [file, argv] = asRoot
    ? ['su', ['postgres', '-s', '/bin/bash', '-c', [bin, ...args].map(quote).join(' ')]]
    : [bin, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: timeoutMs }, (err, stdout, stderr) =>
      err ? reject(new Error(`${path.basename(bin)} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`)) : resolve(stdout),
    );
  });
}

function runPgSync(bin: string, args: string[]): void {
  const [file, argv] = asRoot ? ['su', ['postgres', '-s', '/bin/bash', '-c', [bin, ...args].map(quote).join(' ')]] : [bin, args];
  execFileSync(file, argv, { stdio: 'ignore', timeout: 30_000 });
}

const live = new Set<() => void>();
process.on('exit', () => {
  for (const stopNow of live) stopNow();
});

/** A folder of its own for one server: its data folder, socket folder and log (owned by postgres when we are root). */
async function serverFolder(prefix: string) {
  const work = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(work, 0o755);
  const dataDir = path.join(work, 'data');
  const sockDir = path.join(work, 'sock');
  mkdirSync(sockDir);
  if (asRoot) execFileSync('chown', ['-R', 'postgres', work]);
  return { work, dataDir, sockDir, logFile: path.join(work, 'pg.log'), port: await freePort() };
}

/** The server of a folder; `prepare` fills its data folder (initdb, pg_basebackup) before the first start. */
async function serverIn(folder: Awaited<ReturnType<typeof serverFolder>>, bin: string, prepare: () => Promise<unknown>, extraOptions = ''): Promise<PgServer> {
  const { work, dataDir, sockDir, logFile, port } = folder;
  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const pgCtl = path.join(bin, 'pg_ctl');
  const options = `-p ${port} -k ${sockDir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off${extraOptions}`;

  const stopNow = () => {
    try {
      runPgSync(pgCtl, ['-D', dataDir, '-m', 'immediate', 'stop']);
    } catch {
      /* not running */
    }
    rmSync(work, { recursive: true, force: true });
  };
  live.add(stopNow);

  const server: PgServer = {
    port,
    adminUrl,
    dataDir,
    running: false,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgresql://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop(mode = 'fast') {
      await runPg(pgCtl, ['-D', dataDir, '-m', mode, '-w', 'stop']);
      server.running = false;
    },
    async start() {
      await runPg(pgCtl, ['-D', dataDir, '-w', '-t', '60', '-l', logFile, '-o', options, 'start']);
      server.running = true;
    },
    async cleanup() {
      if (!live.has(stopNow)) return;
      live.delete(stopNow);
      if (server.running) await server.stop('immediate').catch(() => {});
      rmSync(work, { recursive: true, force: true });
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  };
  try {
    await prepare();
    await server.start();
  } catch (err) {
    await server.cleanup();
    throw err;
  }
  return server;
}

export async function startPgServer(): Promise<PgServer> {
  const bin = pgBin();
  const folder = await serverFolder('pg-server-');
  return serverIn(folder, bin, () => runPg(path.join(bin, 'initdb'), ['-D', folder.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']));
}

/**
 * A streaming replica of `primary` (a hot standby, read-only): a base backup taken over
 * the replication protocol (initdb -A trust lets 127.0.0.1 replicate without a password),
 * with -R writing standby.signal and the primary's address, started on a port of its own.
 * createDatabase cannot run on it; its databases are the primary's.
 */
export async function startReplica(primary: PgServer): Promise<PgServer> {
  const bin = pgBin();
  const folder = await serverFolder('pg-replica-');
  const backup = ['-D', folder.dataDir, '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'];
  return serverIn(folder, bin, () => runPg(path.join(bin, 'pg_basebackup'), backup), ' -c hot_standby=on');
}
