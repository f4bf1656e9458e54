// Real processes for end-to-end tests: the built server (dist/src/main.js) and
// CLI (dist/src/cli/main.js), on free loopback ports and temporary data folders.
// Every child is registered and killed by killAll() (call it in afterAll) and,
// as a last resort, when the test process exits.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freshPostgresDatabase, onPostgres } from './postgres';

export const ROOT = path.resolve(__dirname, '../..');
export const SERVER_JS = path.join(ROOT, 'dist/src/main.js');
export const CLI_JS = path.join(ROOT, 'dist/src/cli/main.js');

/** Variables the service reads: never inherited from the test runner's environment. */
const SERVICE_VARS = [
  'DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'HASH_KEY', 'ADMIN_EMAIL', 'ADMIN_PASSWORD', 'WEB_CONCURRENCY',
  'PUBLIC_URL', 'LOG_LEVEL', 'GRAPHQL_INTROSPECTION', 'DB_POOL_SIZE', 'LOGIN_THROTTLE_WINDOW_SECONDS',
  'CALLBACK_RATE_WINDOW_SECONDS', 'BENCH_MODE', 'NODE_ENV', 'NODE_OPTIONS', 'LOGIN_THROTTLE_ADDRESS_FAILURES', 'OPENAPI_CONFORMANCE', 'TRUST_PROXY',
  'WORKER',
];

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** SIGKILLs every child still running (afterAll safety net). */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (!running.has(child)) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARS) delete base[name];
  // OPENAPI_CONFORMANCE=fail: an answer the OpenAPI document does not describe is a 500 OpenApiViolation
  return { ...base, NODE_ENV: 'test', OPENAPI_CONFORMANCE: 'fail', ...env };
}

let built: Promise<void> | undefined;
/**
 * Brings dist/ up to date (node scripts/ensure-built.js), once per test worker,
 * serialised across processes by a lock folder so that two workers never run tsc
 * over the same dist/ at once.
 */
export function ensureBuilt(): Promise<void> {
  built ??= (async () => {
    const lock = path.join(os.tmpdir(), `ensure-built-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`);
    const deadline = Date.now() + 5 * 60_000;
    for (;;) {
      try {
        mkdirSync(lock);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        // a lock older than 5 minutes was left by a killed run
        try {
          if (Date.now() - statSync(lock).mtimeMs > 5 * 60_000) rmSync(lock, { recursive: true, force: true });
        } catch {
          /* removed meanwhile */
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`, { cause: err });
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    try {
      await new Promise<void>((resolve, reject) => {
        execFile(process.execPath, [path.join(ROOT, 'scripts/ensure-built.js')], { cwd: ROOT, env: childEnv({}) }, (err, stdout, stderr) =>
          err ? reject(new Error(`node scripts/ensure-built.js failed:\n${stdout}${stderr}`)) : resolve(),
        );
      });
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  })();
  return built;
}

/** A port nothing listens on right now (the kernel's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A fresh folder under the OS temp dir, and a function that removes it. */
export function tempDir(prefix: string): { path: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A database of their own for the server and CLI processes a test starts: a temporary DATA_DIR
 * (the embedded database, and the hash key beside it), and on the PostgreSQL run a fresh
 * database too (DATABASE_URL). remove() drops the database and removes the folder.
 */
export async function processDatabase(prefix: string): Promise<{ env: { DATA_DIR: string; DATABASE_URL?: string }; remove(): Promise<void> }> {
  const data = tempDir(prefix);
  const fresh = onPostgres ? await freshPostgresDatabase() : undefined;
  return {
    env: fresh ? { DATA_DIR: data.path, DATABASE_URL: fresh.url } : { DATA_DIR: data.path },
    async remove() {
      try {
        await fresh?.drop();
      } finally {
        data.remove();
      }
    },
  };
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ProcessExitedError extends Error {
  constructor(readonly status: ExitStatus, readonly logs: string[], readonly ms: number) {
    super(`server exited (code ${status.code}, signal ${status.signal}) before listening:\n${logs.join('\n')}`);
    this.name = 'ProcessExitedError';
  }
}

export interface ServerHandle {
  port: number;
  url: string;
  pid: number;
  /** stdout and stderr lines so far (pino JSON lines, mostly) */
  logs: string[];
  /** the same lines, by stream: stdout (the JSON log) and stderr */
  stdout: string[];
  stderr: string[];
  /** resolves when the process has exited */
  exited: Promise<ExitStatus>;
  /** SIGTERM, then waits for the exit; SIGKILL after timeoutMs. Resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
}

function track(child: ChildProcess): Promise<ExitStatus> {
  running.add(child);
  return new Promise((resolve) => {
    // 'close', not 'exit': all of stdout/stderr has been read by then
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
}

/** Lines of both streams into `into`, and of each into its own list (`byStream`: stdout's, stderr's). */
function collectLines(child: ChildProcess, into: string[], onLine?: (line: string) => void, byStream: [string[], string[]] = [[], []]): void {
  for (const [stream, own] of [[child.stdout, byStream[0]], [child.stderr, byStream[1]]] as const) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        into.push(line);
        own.push(line);
        onLine?.(line);
      }
    });
    stream?.on('end', () => {
      if (partial) {
        into.push(partial);
        own.push(partial);
      }
      partial = '';
    });
  }
}

/** Resolves once GET url answers 200 (polling every 100 ms), or when `stop()` says to give up. */
async function pollUntilOk(url: string, stop: () => boolean): Promise<void> {
  while (!stop()) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts dist/src/main.js on a free port with the given environment (DATABASE_URL
 * or DATA_DIR, ADMIN_PASSWORD, ...) and resolves once it logs "listening on" (or
 * `readyLine`), or, with `readyPath`, once GET readyPath answers 200 (for a
 * LOG_LEVEL that leaves "listening on" out). Rejects with ProcessExitedError when
 * the process exits first. With `command` (e.g. ['npm', 'start']) it runs that
 * instead, from the project folder: the handle's pid is then that command's process.
 */
export async function startServer(
  env: Record<string, string | undefined>,
  options: { timeoutMs?: number; args?: string[]; readyLine?: string; readyPath?: string; command?: string[] } = {},
): Promise<ServerHandle> {
  const readyLine = options.readyLine ?? 'listening on';
  await ensureBuilt();
  const port = await freePort();
  const logs: string[] = [];
  const stdout: string[] = [];
  const stderr: string[] = [];
  const started = Date.now();
  const [file, ...args] = options.command ?? [process.execPath, SERVER_JS];
  const child = spawn(file, [...args, ...(options.args ?? [])], {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = track(child);
  const handle: ServerHandle = {
    port,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    logs,
    stdout,
    stderr,
    exited,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const status = await exited;
      clearTimeout(timer);
      return status.code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 60_000;
    let settled = false;
    const ready = () => {
      settled = true;
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      settled = true;
      child.kill('SIGKILL');
      const awaited = options.readyPath ? `answer 200 on ${options.readyPath}` : `log "${readyLine}"`;
      reject(new Error(`server did not ${awaited} within ${timeoutMs} ms:\n${logs.join('\n')}`));
    }, timeoutMs);
    collectLines(
      child,
      logs,
      (line) => {
        if (!options.readyPath && line.includes(readyLine)) ready();
      },
      [stdout, stderr],
    );
    if (options.readyPath) void pollUntilOk(`${handle.url}${options.readyPath}`, () => settled).then(() => settled || ready());
    void exited.then((status) => {
      settled = true;
      clearTimeout(timer);
      // let the last lines of output arrive before reporting them
      setImmediate(() => reject(new ProcessExitedError(status, logs, Date.now() - started)));
    });
  });
  return handle;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** wall time from spawn to exit */
  ms: number;
  /** time from the last output to the exit: how long the process lingered once done */
  lingerMs: number;
}

/** Runs dist/src/cli/main.js with args; SIGKILLs it after timeoutMs. */
export function runCli(args: string[], env: Record<string, string | undefined>, options: { timeoutMs?: number } = {}): Promise<CliResult> {
  return runToExit(CLI_JS, args, env, options);
}

/** Runs a built script to its exit (e.g. the server, when it is expected to refuse to start). */
export async function runToExit(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  options: { timeoutMs?: number } = {},
): Promise<CliResult> {
  await ensureBuilt();
  const started = Date.now();
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = track(child);
  let stdout = '';
  let stderr = '';
  let lastOutput = started;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    lastOutput = Date.now();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    lastOutput = Date.now();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const status = await exited;
  clearTimeout(timer);
  const ended = Date.now();
  return { ...status, stdout, stderr, ms: ended - started, lingerMs: ended - lastOutput };
}

/** POST /graphql over real HTTP. */
export async function graphqlOverHttp(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: { data?: Record<string, any> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as never };
}
