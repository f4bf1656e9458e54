import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, killAll, ROOT, startServer, tempDir, type ServerHandle } from './helpers/processes';
import { describeIf } from './helpers/skip';

// The README's first journey, as a newcomer runs it: the server started like
// `npm start` (embedded database, a fresh data folder, no ADMIN_PASSWORD: the
// generated one is read from the log), then the README's own shell block, run
// with bash and curl, word for word. It must end with a 201 callback request.

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The sh block between <!-- {name}:start --> and <!-- {name}:end --> in the README. */
function journeyBlock(name = 'journey'): string {
  const m = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(README);
  if (!m) throw new Error(`README.md has no <!-- ${name}:start --> \`\`\`sh … \`\`\` <!-- ${name}:end --> block`);
  return m[1];
}

/** A block as a script for this server: the reader's BASE and PW lines dropped (the test sets both), stopping at the first failure. */
const script = (block: string) => `set -euo pipefail\n${block.replace(/^BASE=.*$/m, '').replace(/^PW=.*$/m, '')}`;

/** The password `npm start` generated for the first admin, from its log. */
function generatedPassword(server: ServerHandle): string {
  const line = server.logs.find((l) => l.includes('generated password (shown once)'));
  expect(line).toBeDefined();
  const password = /generated password \(shown once\): (\S+)$/.exec(JSON.parse(line!).msg ?? '')?.[1];
  expect(password).toBeTruthy();
  return password!;
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['--norc', '--noprofile', '-c', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
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
    // the block sets BASE and PW for a reader; here they point at this server
    // HOME: an empty folder, so that no shell start-up file of this machine runs
    const run = await bash(script(journeyBlock()), { BASE: server.url, PW: generatedPassword(server), HOME: data.path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // every curl -i of the block printed its status line (after the previous body, which ends without a newline); the last is the callback request's
    const statuses = [...run.stdout.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(statuses.length).toBeGreaterThanOrEqual(4);
    expect(statuses.every((s) => s >= 200 && s < 300)).toBe(true);
    expect(statuses.at(-1)).toBe(201);
    expect(run.stdout).toMatch(/^x-rate-limit-remaining: 29\r?$/im);
  });

  it('runs the webhook block as written: the example receiver prints the verified oauth_client.created', async () => {
    // the receiver's port 4000 of the block, made a free one (tests run side by side)
    const port = await freePort();
    const block = journeyBlock('webhook-journey').replaceAll('127.0.0.1:4000', `127.0.0.1:${port}`);
    const run = await bash(script(block), { BASE: server.url, PW: generatedPassword(server), HOME: data.path, PORT: String(port) });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^listening on http://127\\.0\\.0\\.1:${port}/hook$`, 'm'));
    expect(run.stdout).toMatch(/^verified zen:event-type:oauth_client\.created zen:oauth_client:\d+ \(\d+\)$/m);
    expect(run.stdout).not.toMatch(/^refused/m);
  });
});
