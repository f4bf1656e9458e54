// A throwaway PostgreSQL server for one benchmark run: initdb into a temporary
// folder, pg_ctl start on a free loopback port, and stop + remove it at the end
// (also on Ctrl-C or failure: run.ts registers stop() for every exit path).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './net';

export interface ThrowawayPostgres {
  url: string;
  /** settings the report states */
  settings: string;
  stop(): void;
}

function pgBin(): string {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql (or set BENCH_DATABASE_URL)');
  const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin/initdb')));
  versions.sort((a, b) => Number(a) - Number(b));
  if (!versions.length) throw new Error('no initdb under /usr/lib/postgresql/*/bin (or set BENCH_DATABASE_URL)');
  return path.join(base, versions[versions.length - 1], 'bin');
}

/** Runs a command as the postgres user when we are root (initdb refuses root). */
function asPostgres(cmd: string, args: string[]): void {
  const quoted = [cmd, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = process.getuid?.() === 0
    ? spawnSync('su', ['postgres', '-s', '/bin/bash', '-c', quoted], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} failed (${r.status}): ${r.stderr?.toString()}${r.stdout?.toString()}`);
}

export async function startPostgres(): Promise<ThrowawayPostgres> {
  const bin = pgBin();
  const work = mkdtempSync(path.join(os.tmpdir(), 'bench-pg-'));
  chmodSync(work, 0o755);
  const data = path.join(work, 'data');
  const log = path.join(work, 'pg.log');
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', work]);
  const port = await freePort();
  // A benchmark database: durability off (fsync, synchronous_commit), so the
  // disk does not decide the numbers; buffers large enough for a million tokens.
  const settings = '-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB -c max_connections=200';
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      try {
        asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        /* already gone */
      }
    }
    rmSync(work, { recursive: true, force: true });
  };
  try {
    asPostgres(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale']);
    asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-w', '-l', log, '-o', `-p ${port} -k ${work} -c listen_addresses=127.0.0.1 ${settings}`, 'start']);
    started = true;
  } catch (err) {
    stop();
    throw err;
  }
  return { url: `postgresql://postgres@127.0.0.1:${port}/postgres`, settings: settings.replace(/-c /g, ''), stop };
}
