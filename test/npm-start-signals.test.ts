import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { killAll, startServer, tempDir } from './helpers/processes';

// README, "Deploying": a container runtime or systemd stops the service by signalling the
// process it started, here the README's own start command, `npm start`. SIGTERM (or SIGINT)
// to that npm process must end every process under it, the server draining as
// src/main.ts does (it exits 0, and so does npm), and free the port. Once it did not: npm
// passed the signal to the `sh -c` running the script, which died and left the server
// running and serving.

jest.setTimeout(60_000);

/** main.ts gives up draining after 10 s (SHUTDOWN_GRACE_MS) */
const DRAIN_MS = 10_000;

interface Proc {
  pid: number;
  ppid: number;
  /** clock ticks since boot: tells a process from a later one given the same pid */
  startTime: string;
  cmd: string;
}

function readProc(pid: number): (Proc & { state: string }) | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, state: fields[0], ppid: Number(fields[1]), startTime: fields[19], cmd };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Every process below pid, now (from /proc: Linux, as the machines this runs on). */
function descendants(pid: number): Proc[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p) => p !== undefined);
  const below: Proc[] = [];
  const walk = (parent: number) => {
    for (const p of all.filter((q) => q.ppid === parent)) {
      below.push(p);
      walk(p.pid);
    }
  };
  walk(pid);
  return below;
}

/** Still running: the same process (not a later one with its pid), and not a zombie awaiting its parent. */
function alive(p: Proc): boolean {
  const now = readProc(p.pid);
  return now !== undefined && now.startTime === p.startTime && now.state !== 'Z';
}

/** Resolves with the time it took for a connection to the port to be refused; rejects after timeoutMs. */
async function portClosed(port: number, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!open) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`port ${port} still accepts connections ${timeoutMs} ms after the signal`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readyz(url: string): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = (await fetch(`${url}/readyz`)).status;
    if (status === 200 || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('npm start, signalled as a container runtime or systemd does', () => {
  // one data folder for both: the second start finds it migrated (a restart, and 2 s instead of 10)
  let data: ReturnType<typeof tempDir>;
  beforeAll(() => {
    data = tempDir('npm-start-signals-');
  });
  afterAll(async () => {
    await killAll();
    data.remove();
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the npm process: the server drains and exits, npm exits 0, the port closes, no process is left`, async () => {
      let tree: Proc[] = [];
      try {
        // the README's command as written: no NODE_ENV (the development defaults), its own data folder and port
        const server = await startServer({ NODE_ENV: undefined, DATA_DIR: data.path }, { command: ['npm', 'start'] });
        expect(await readyz(server.url)).toBe(200);
        tree = descendants(server.pid);
        expect(tree.map((p) => p.cmd)).toEqual(expect.arrayContaining([expect.stringContaining('dist/src/main.js')]));

        process.kill(server.pid, signal);
        const closed = portClosed(server.port, DRAIN_MS);
        const status = await Promise.race([
          server.exited,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`npm still running ${DRAIN_MS + 5000} ms after ${signal}`)), DRAIN_MS + 5000).unref()),
        ]);
        expect(await closed).toBeLessThan(DRAIN_MS);
        expect(status).toEqual({ code: 0, signal: null });
        expect(tree.filter(alive).map((p) => `${p.pid} ${p.cmd}`)).toEqual([]);
        // main.ts's own shutdown ran (not a kill): it logs before draining
        expect(server.logs.join('\n')).toContain(`"signal":"${signal}","msg":"shutting down: finishing in-flight requests"`);
      } finally {
        // a server the signal did not reach would outlive the test: end it here
        for (const p of tree.filter(alive)) process.kill(p.pid, 'SIGKILL');
      }
    });
  }
});
