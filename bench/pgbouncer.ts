// A pgbouncer of the benchmark's own (bench/scaling.ts): transaction pooling in front of one
// database of a PostgreSQL server, on a free loopback port, as the service runs behind one
// (DATABASE_URL=…?pgbouncer=true, DIRECT_URL=the primary; docs/scaling.md). It runs as user
// `postgres` when the benchmark runs as root (pgbouncer refuses root). No side effect on
// import: the test of the bench smoke asks pgbouncerBinary() whether it can run at all.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** Where Debian's package puts it, or the PATH. */
export function pgbouncerBinary(): string | undefined {
  const dirs = ['/usr/sbin', '/usr/local/sbin', '/usr/local/bin', '/usr/bin', ...(process.env.PATH ?? '').split(':').filter(Boolean)];
  return dirs.map((d) => path.join(d, 'pgbouncer')).find((p) => existsSync(p));
}

export interface PgbouncerSettings {
  /** server connections per database and user (default_pool_size) */
  poolSize: number;
  /** client connections it accepts (max_client_conn) */
  maxClientConn: number;
}

export interface Pgbouncer {
  /** the database through the pooler, as the service takes it: postgresql://…/db?pgbouncer=true */
  url: string;
  child: ChildProcess;
  /** the ini it runs with (for the report) */
  settings: Record<string, string>;
  /** what it printed */
  output: string[];
  stop(): Promise<void>;
}

const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** Starts pgbouncer (pool_mode=transaction) in front of the database of `databaseUrl` (a postgresql:// URL on TCP). */
export async function startPgbouncer(databaseUrl: string, port: number, settings: PgbouncerSettings): Promise<Pgbouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('pgbouncer not found (apt-get install pgbouncer)');
  const target = new URL(databaseUrl);
  if (!target.hostname) throw new Error(`the pooler needs a server reached over TCP, not ${target.host || 'a socket'}`);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const dbname = decodeURIComponent(target.pathname.slice(1));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-pgbouncer-'));
  chmodSync(dir, 0o755);
  const server = [`host=${target.hostname}`, `port=${target.port || 5432}`, `dbname=${dbname}`, `user=${user}`, ...(password ? [`password=${quote(password)}`] : [])];
  const ini: Record<string, string> = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    // no socket file of its own in /tmp
    unix_socket_dir: '',
    // the benchmark's clients are on loopback; pgbouncer still wants them listed in the auth file
    auth_type: 'trust',
    auth_file: path.join(dir, 'users.txt'),
    pool_mode: 'transaction',
    default_pool_size: String(settings.poolSize),
    min_pool_size: '0',
    reserve_pool_size: '0',
    max_client_conn: String(settings.maxClientConn),
    // the pg driver sends none of these; a client that does is not refused for it
    ignore_startup_parameters: 'extra_float_digits,options',
    log_connections: '0',
    log_disconnections: '0',
  };
  writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`);
  const text = `[databases]\n${dbname} = ${server.join(' ')}\n\n[pgbouncer]\n${Object.entries(ini).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`;
  const file = path.join(dir, 'pgbouncer.ini');
  writeFileSync(file, text, { mode: 0o644 });
  chmodSync(path.join(dir, 'users.txt'), 0o644);
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) } : {};
  const child = spawn(binary, [file], { ...ids, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  for (const s of [child.stdout, child.stderr]) s.on('data', (d: Buffer) => output.push(String(d)));
  let running = true;
  const exited = new Promise<void>((resolve) => child.once('exit', () => ((running = false), resolve())));
  const url = `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}/${encodeURIComponent(dbname)}?pgbouncer=true`;
  const stop = async () => {
    if (running) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // ready when a query goes through it
  const deadline = Date.now() + 15_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url.replace('?pgbouncer=true', '') });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => {});
      if (!running || Date.now() > deadline) {
        await stop();
        throw new Error(`pgbouncer did not start: ${(err as Error).message}\n${output.join('')}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url, child, settings: ini, output, stop };
}
