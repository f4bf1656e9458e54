// A throwaway PostgreSQL 15 server of a test's own, on a free loopback port in a
// temporary folder (the approach of .ci/run): fault tests stop and restart it, so it
// cannot be the shared one. Runs as user `postgres` when the tests run as root (the
// server refuses root). stop()/start() keep the port and the data folder; cleanup()
// stops it and removes everything, and also runs when the test process exits.
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

export async function startPgServer(): Promise<PgServer> {
  const bin = pgBin();
  const work = mkdtempSync(path.join(os.tmpdir(), 'pg-server-'));
  chmodSync(work, 0o755);
  const dataDir = path.join(work, 'data');
  const sockDir = path.join(work, 'sock');
  const logFile = path.join(work, 'pg.log');
  mkdirSync(sockDir);
  if (asRoot) execFileSync('chown', ['-R', 'postgres', work]);
  const port = await freePort();
  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const pgCtl = path.join(bin, 'pg_ctl');
  const options = `-p ${port} -k ${sockDir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off`;

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
    await runPg(path.join(bin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await server.start();
  } catch (err) {
    await server.cleanup();
    throw err;
  }
  return server;
}
