import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { killAll, ROOT, startServer, tempDir, type ServerHandle } from './helpers/processes';
import { describeIf } from './helpers/skip';

// The README's first journey, as a newcomer runs it: the server started like
// `npm start` (embedded database, a fresh data folder, no ADMIN_PASSWORD: the
// generated one is read from the log), then the README's own shell block, run
// with bash and curl, word for word. It must end with a 201 callback request.

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The sh block between <!-- journey:start --> and <!-- journey:end --> in the README. */
function journeyBlock(): string {
  const m = /<!-- journey:start -->\s*```sh\n([\s\S]*?)```\s*<!-- journey:end -->/.exec(README);
  if (!m) throw new Error('README.md has no <!-- journey:start --> ```sh … ``` <!-- journey:end --> block');
  return m[1];
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['--norc', '--noprofile', '-c', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const curlMissing = !existsSync('/usr/bin/curl');

describeIf(!curlMissing, 'needs-curl', 'no curl at /usr/bin/curl (apt-get install curl)')('README: from npm start to a 201 callback request with curl only', () => {
  let server: ServerHandle;
  const data = tempDir('readme-journey-');

  beforeAll(async () => {
    server = await startServer({ DATA_DIR: data.path });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await killAll();
    data.remove();
  });

  it('runs the README block as written and gets 201 for the callback request', async () => {
    const line = server.logs.find((l) => l.includes('generated password (shown once)'));
    expect(line).toBeDefined();
    const password = /generated password \(shown once\): (\S+)$/.exec(JSON.parse(line!).msg ?? '')?.[1];
    expect(password).toBeTruthy();

    const block = journeyBlock();
    // the block sets BASE and PW for a reader; here they point at this server
    const script = `set -euo pipefail\n${block.replace(/^BASE=.*$/m, '').replace(/^PW=.*$/m, '')}`;
    // HOME: an empty folder, so that no shell start-up file of this machine runs
    const run = await bash(script, { BASE: server.url, PW: password!, HOME: data.path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // every curl -i of the block printed its status line (after the previous body, which ends without a newline); the last is the callback request's
    const statuses = [...run.stdout.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(statuses.length).toBeGreaterThanOrEqual(4);
    expect(statuses.every((s) => s >= 200 && s < 300)).toBe(true);
    expect(statuses.at(-1)).toBe(201);
    expect(run.stdout).toMatch(/^x-rate-limit-remaining: 29\r?$/im);
  });
});
