// The production topology of scripts/topology.sh, for tests: a PostgreSQL primary, a streaming
// replica, pgbouncer in transaction mode, two web processes and a worker, in a temporary
// folder. startTopology() runs `scripts/topology.sh start` and reads the topology.env it
// writes; drill() runs its failure drills (kill-web, restart-pooler, …); stop() runs
// `stop --clean`, which also runs when the test process exits (a crashed test leaves nothing).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, ensureBuilt, tempDir } from './processes';

const SCRIPT = path.join(ROOT, 'scripts/topology.sh');

/** What the script's caller may set: never inherited from the test runner's environment. */
const SCRIPT_VARS = ['TOPOLOGY_DIR', 'TOPOLOGY_BASE_PORT', 'ADMIN_EMAIL', 'ADMIN_PASSWORD', 'PUBLIC_URL', 'LOG_LEVEL'];

export type ServiceProcess = 'web1' | 'web2' | 'worker';

export interface Topology {
  /** $TOPOLOGY_DIR */
  dir: string;
  /** topology.env: PRIMARY_URL, REPLICA_URL, POOLER_URL, WEB1_URL, WEB2_URL, ADMIN_EMAIL, ADMIN_PASSWORD, the pids… */
  env: Record<string, string>;
  /** the two web processes' base URLs (web 1, web 2) */
  web: [string, string];
  /** how long `start` took (ms) */
  startMs: number;
  /** `scripts/topology.sh <command> [args]`; resolves with its output, rejects with it when it fails */
  drill(command: string, ...args: string[]): Promise<string>;
  /** a service process's log so far (JSON lines) */
  log(name: ServiceProcess): string;
  /** stop --clean: everything stopped, the folder removed (safe to call twice) */
  stop(): Promise<void>;
}

/** topology.env's KEY=value lines (a value may be single-quoted, as the shell reads it). */
function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!m) continue;
    const raw = m[2];
    env[m[1]] = raw.startsWith("'") && raw.endsWith("'") ? raw.slice(1, -1).replace(/'\\''/g, "'") : raw;
  }
  return env;
}

function scriptEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRIPT_VARS) delete env[name];
  return { ...env, TOPOLOGY_DIR: dir };
}

function runScript(dir: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [SCRIPT, ...args], { cwd: ROOT, env: scriptEnv(dir), timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`scripts/topology.sh ${args.join(' ')} failed (${err.message.split('\n')[0]}):\n${stdout}${stderr}`)) : resolve(`${stdout}${stderr}`),
    );
  });
}

/** Starts the whole topology in a fresh temporary folder; resolves once every process is ready. */
export async function startTopology(options: { timeoutMs?: number } = {}): Promise<Topology> {
  await ensureBuilt();
  const folder = tempDir('topology-');
  const dir = folder.path;
  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    try {
      execFileSync('bash', [SCRIPT, 'stop', '--clean'], { cwd: ROOT, env: scriptEnv(dir), stdio: 'ignore', timeout: 60_000 });
    } catch {
      folder.remove();
    }
  };
  process.on('exit', stopNow);
  const started = Date.now();
  try {
    await runScript(dir, ['start'], options.timeoutMs ?? 150_000);
  } catch (err) {
    stopNow();
    throw err;
  }
  const startMs = Date.now() - started;
  const env = parseEnvFile(readFileSync(path.join(dir, 'topology.env'), 'utf8'));
  return {
    dir,
    env,
    web: [env.WEB1_URL, env.WEB2_URL],
    startMs,
    drill: (command, ...args) => runScript(dir, [command, ...args], 150_000),
    log: (name) => {
      const file = path.join(dir, `${name}.log`);
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', stopNow);
      await runScript(dir, ['stop', '--clean'], 90_000).catch(() => folder.remove());
    },
  };
}
