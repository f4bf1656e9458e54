// The benchmark's processes: the servers it starts (service, references, workers), its
// load processes and its throwaway PostgreSQL, all stopped when it exits, however it exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './load';
import { freePort, waitForHttp } from './net';
import { startPostgres, type ThrowawayPostgres } from './postgres';

const ROOT = path.resolve(__dirname, '../..');

/** every process the benchmark started: killed when it ends, however it ends */
export const children = new Set<ChildProcess>();
let pgServer: ThrowawayPostgres | undefined;

/** A PostgreSQL server of this run (stopped and removed when it ends). */
export async function throwawayPostgres(): Promise<ThrowawayPostgres> {
  pgServer ??= await startPostgres();
  return pgServer;
}

export function cleanupSync(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  pgServer?.stop();
  pgServer = undefined;
}
process.on('exit', cleanupSync);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the benchmark`);
    cleanupSync();
    process.exit(130);
  });
}

export interface Server {
  name: string;
  origin: string;
  child: ChildProcess;
  /** what it printed (stdout and stderr) */
  output: string[];
  /** SIGTERM, SIGKILL after graceMs */
  stop(graceMs?: number): Promise<void>;
}

export async function startServer(name: string, script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Server> {
  const port = await freePort();
  const output: string[] = [];
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`,
      NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  for (const s of [child.stdout, child.stderr]) s?.on('data', (d: Buffer) => output.push(String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    children.delete(child);
    resolve();
  }));
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${origin}/healthz`, 60_000, () => children.has(child));
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${name} did not start: ${(err as Error).message}\n${output.join('')}`, { cause: err });
  }
  return {
    name,
    origin,
    child,
    output,
    async stop(graceMs = 3000) {
      if (!children.has(child)) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}


/** Runs one load process (bench/load.ts, autocannon) with its spec in a file of `tmp`; resolves with its JSON result. */
export function runLoader(spec: LoadSpec, tmp: string): Promise<LoadResult & { issued: number }> {
  const file = path.join(tmp, `spec-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify(spec));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'load.js'), file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += String(d)));
    child.stderr.on('data', (d: Buffer) => (err += String(d)));
    child.once('close', (code) => {
      children.delete(child);
      rmSync(file, { force: true });
      if (code !== 0) return reject(new Error(`load process failed (${code}): ${err}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? ''));
      } catch {
        reject(new Error(`load process printed no result: ${out}${err}`));
      }
    });
  });
}
