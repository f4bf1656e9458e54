import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { SHUTDOWN_GRACE_MS } from '../src/shutdown';
import { ensureBuilt, killAll, processDatabase, ROOT, startServer } from './helpers/processes';
import { basicHeader } from './helpers/test-app';

// docs/api.md, "Operations": SIGTERM stops accepting, finishes in-flight requests, closes the
// database and exits 0 — promptly. The server runs as in production
// (NODE_ENV=production): Apollo Server installs its own signal handlers outside
// NODE_ENV=test, and those once made shutdown hang for ~10 s.

jest.setTimeout(120_000);

const HASH_KEY = 'shutdown-test-hash-key-0123456789abcdef';
const ADMIN = { email: 'admin@example.com', password: 'shutdown-admin-pw' };

describe('graceful shutdown of a production server', () => {
  let database: Awaited<ReturnType<typeof processDatabase>> | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await processDatabase('shutdown-test-');
    // production requires PUBLIC_URL (links and subdomains never come from the Host header)
    env = { NODE_ENV: 'production', HASH_KEY, PUBLIC_URL: 'https://help.example.com', ADMIN_PASSWORD: ADMIN.password, ...database.env };
  });
  afterAll(async () => {
    try {
      await killAll();
    } finally {
      await database?.remove();
    }
  });

  it('exits 0 within 5 s of SIGTERM, after answering a request already in flight', async () => {
    const server = await startServer(env);
    // A first request warms the HTTP path, so that the next one reaches its handler
    // within milliseconds even on a loaded machine (one that arrives after SIGTERM
    // rightly gets Fastify's 503).
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    // The request in flight: its headers and the start of its body are sent, then, once the
    // server has surely read the headers (the request is then an active one, not an idle
    // connection that closing may drop), SIGTERM, and then the rest of the body. A Basic
    // request then costs a password KDF (~200 ms of CPU) before its answer.
    const body = JSON.stringify({ query: '{ me { email } }' });
    const request = http.request(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), authorization: basicHeader(ADMIN.email, ADMIN.password) },
    });
    const inFlight = new Promise<{ status: number; body: { data?: { me?: unknown } } }>((resolve, reject) => {
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += String(chunk)));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      });
      request.on('error', reject);
    });
    request.write(body.slice(0, 10));
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    const stopped = server.stop(15_000);
    await new Promise((r) => setTimeout(r, 100));
    request.end(body.slice(10));
    const code = await stopped;
    const elapsed = Date.now() - started;

    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body.data!.me).toEqual({ email: ADMIN.email });
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(5000);
    expect(server.logs.join('\n')).toContain('shutting down');
    expect(server.logs.join('\n')).not.toContain('shutdown took too long');
  });
});

// src/shutdown.ts: the signal listeners go in before anything starts, so a signal that
// arrives while the process starts (a supervisor that restarts it at once, a test that
// stops it on its ready line) is a graceful stop, never Node's default death by signal.
describe('a signal while the process starts', () => {
  afterAll(() => killAll());

  it('a server told to stop while it migrates finishes starting, then stops and exits 0', async () => {
    const fresh = await processDatabase('shutdown-starting-');
    try {
      // the first line of a first start, logged under the migration lock: much is still to do
      const server = await startServer({ ADMIN_PASSWORD: ADMIN.password, ...fresh.env }, { readyLine: 'created account' });
      expect(await server.stop(15_000)).toBe(0);
      const logs = server.logs.join('\n');
      expect(logs).toContain('shutting down');
      expect(logs).not.toContain('shutdown took too long');
    } finally {
      await fresh.remove();
    }
  });

  /** A process that installs the listeners, then "starts" when the test writes to its stdin. */
  const starting = async () => {
    await ensureBuilt();
    const script = `
      const { handleShutdownSignals } = require(${JSON.stringify(path.join(ROOT, 'dist/src/shutdown.js'))});
      const signals = handleShutdownSignals(require('pino')());
      process.stdin.once('data', () => signals.started({ what: 'the test\\'s stop', run: async () => console.log('stop ran') }));
      console.log('listeners installed');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const until = async (text: string) => {
      const deadline = Date.now() + 30_000;
      while (!output.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(output).toContain(text);
    };
    return { child, exited, until, output: () => output };
  };

  it('a signal before start-up ends is kept, and the stop runs once start-up hands it over', async () => {
    const proc = await starting();
    await proc.until('listeners installed');
    proc.child.kill('SIGTERM');
    await proc.until('signal received while starting');
    // still running: nothing was stopped under a start-up in progress
    await new Promise((r) => setTimeout(r, 300));
    expect(proc.child.exitCode).toBeNull();
    expect(proc.child.signalCode).toBeNull();
    proc.child.stdin.write('started\n');
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toContain('stop ran');
    expect(proc.output()).toMatch(/"signal":"SIGTERM".*"msg":"shutting down: the test's stop"/);
  });

  it('a start-up that does not end within the grace period after the signal exits 1', async () => {
    const proc = await starting();
    await proc.until('listeners installed');
    const signalled = Date.now();
    proc.child.kill('SIGINT');
    expect(await proc.exited).toBe(1);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS - 100);
    expect(proc.output()).toContain('start-up did not finish within the shutdown grace period');
    expect(proc.output()).not.toContain('stop ran');
  });
});
