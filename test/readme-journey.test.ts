import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, killAll, ROOT, startServer, tempDir, type ServerHandle } from './helpers/processes';
import { describeIf } from './helpers/skip';

// The README's journeys, as a newcomer runs them: the server started like
// `npm start` (embedded database, a fresh data folder, no ADMIN_PASSWORD: the
// generated one is read from what it prints on stderr), then the README's own shell blocks, run
// with bash and curl, word for word, in the README's order: a 201 callback request,
// that request called back, GraphQL and the audit log, a webhook. Then docs/api.md's walk-through of the
// callback lifecycle, on the same server (it reads its ids from the answers).

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const API_DOCS = readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');

/** The sh block between <!-- {name}:start --> and <!-- {name}:end --> in the README (or another document). */
function journeyBlock(name = 'journey', text = README): string {
  const m = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(text);
  if (!m) throw new Error(`no <!-- ${name}:start --> \`\`\`sh … \`\`\` <!-- ${name}:end --> block`);
  return m[1];
}

/** A block as a script for this server: the reader's BASE and PW lines dropped (the test sets both), stopping at the first failure. */
const script = (block: string) => `set -euo pipefail\n${block.replace(/^BASE=.*$/m, '').replace(/^PW=.*$/m, '')}`;

/** The password `npm start` generated for the first admin, from the block it printed on stderr. */
function generatedPassword(server: ServerHandle): string {
  const password = server.stderr.map((l) => /^ {2}password: (\S+)$/.exec(l)?.[1]).find(Boolean);
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

  it('runs the callback block as written: the request of the first block is offered to Ann, accepted, answered: completed', async () => {
    const run = await bash(script(journeyBlock('callback-journey')), { BASE: server.url, PW: generatedPassword(server), HOME: data.path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // each curl printed one JSON answer on a line of its own (-w '\\n'): membership, availability, show, accept, outcome
    const answers = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(answers).toHaveLength(5);
    expect(answers[1]).toEqual({ availability: { agent_state: 'online', call_status: null, via: 'client' } });
    expect(answers[2].callback_request).toMatchObject({ id: 1, status: 'offered', agent_id: 2 });
    expect(answers[3].callback_request).toMatchObject({ status: 'dialing', attempts: 1 });
    expect(answers[4].callback_request.status).toBe('completed');
    expect(answers[4].callback_request.history.map((h: { status: string }) => h.status)).toEqual(['offered', 'accepted', 'dialing', 'completed']);
  });

  it("runs the GraphQL and audit-log block as written: me is the admin; the newest records are the callback's completion and Ann's call status", async () => {
    const run = await bash(script(journeyBlock('explore-journey')), { BASE: server.url, PW: generatedPassword(server), HOME: data.path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [me, audit] = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(me).toEqual({ data: { me: { email: 'admin@example.com', role: 'ADMIN' } } });
    expect(audit.audit_logs).toHaveLength(3);
    expect(audit.audit_logs.map((a: { source_type: string; change_description: string }) => `${a.source_type}: ${a.change_description}`)).toEqual([
      'user: Call status: none', 'callback_request: Completed: answered (agent 2)', 'user: Call status: on_call',
    ]);
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

  it('runs the walk-through of docs/api.md ("The callback lifecycle") as written: offered at once, accepted, answered, completed', async () => {
    const run = await bash(script(journeyBlock('walkthrough', API_DOCS)), { BASE: server.url, PW: generatedPassword(server), HOME: data.path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    // the Location echoed by step 3, then the request as step 4 shows it: offered to the new agent, with that one step of history
    const location = lines.find((l) => /\/api\/v2\/channels\/voice\/callback_requests\/\d+\.json$/.test(l));
    expect(location).toBeDefined();
    const offered = JSON.parse(lines[lines.indexOf(location!) + 1]).callback_request;
    expect(offered).toMatchObject({ status: 'offered', attempts: 0, queue_position: null });
    expect(offered.history).toEqual([{ status: 'offered', agent_id: offered.agent_id, at: expect.any(String) }]);
    // step 7 prints the status and one line per step of the history
    expect(run.stdout).toMatch(new RegExp(`^completed \\S+Z\\n  offered ${offered.agent_id} \\S+\\n  accepted ${offered.agent_id} \\S+\\n  dialing ${offered.agent_id} \\S+\\n  completed ${offered.agent_id} \\S+$`, 'm'));
    // step 8: the agent is free again, with one accepted and completed callback; the audit log has the four transitions
    const activity = JSON.parse(lines.at(-2)!).agents_activity.find((a: { agent_id: number }) => a.agent_id === offered.agent_id);
    expect(activity).toMatchObject({ name: 'Bea Agent', agent_state: 'online', call_status: null, calls_accepted: 1, callbacks_completed: 1 });
    const audits = JSON.parse(lines.at(-1)!).audit_logs.map((a: { change_description: string }) => a.change_description);
    expect(audits).toEqual([
      `Completed: answered (agent ${offered.agent_id})`, `Dialing the requester for agent ${offered.agent_id}`,
      `Accepted by agent ${offered.agent_id}`, `Offered to agent ${offered.agent_id}`,
    ]);
  });
});
