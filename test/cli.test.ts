import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { onPostgres } from './helpers/postgres';
import { graphqlOverHttp, killAll, processDatabase, runCli, startServer, ProcessExitedError, type CliResult, type ServerHandle } from './helpers/processes';
import { basicHeader } from './helpers/test-app';
import { createDb } from '../src/db/create-db';
import { describeIf } from './helpers/skip';

// docs/api.md, "Operations", end to end with real processes: the CLI manages accounts, users,
// phone numbers and groups, printing JSON; the server then serves what it wrote.
// PGlite runs use an embedded database in a temp DATA_DIR; PostgreSQL runs use a
// fresh database on the test server.

// Process start-up dominates: each CLI command opens the database and checks migrations.
jest.setTimeout(120_000);

const describeOnPglite = describeIf(!onPostgres, 'needs-pglite', 'the embedded database in DATA_DIR: runs when TEST_DATABASE_URL is unset');

const ROLES = ['admin', 'agent', 'end_user'] as const;
const PASSWORDS = { admin: 'admin-password-1', agent: 'agent-password-1', end_user: 'end-user-password-1' };
const ME = '{ me { email role } }';

/** Fails with the process's stderr in view when it did not succeed. */
function parseOutput(result: CliResult): any {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout);
}

function expectNoSecrets(stdout: string): void {
  expect(stdout).not.toMatch(/passwordHash|password_hash|scrypt\$/);
  for (const pw of Object.values(PASSWORDS)) expect(stdout).not.toContain(pw);
}

describe('CLI and server on one database (docs/api.md, "Operations")', () => {
  let database: Awaited<ReturnType<typeof processDatabase>> | undefined;
  let env: Record<string, string>;
  const results: CliResult[] = [];
  let accountId: number;
  const users: Record<string, { id: number; email: string }> = {};
  let server: ServerHandle | undefined;

  const cli = async (...args: string[]) => {
    const result = await runCli(args, env);
    results.push(result);
    return result;
  };

  beforeAll(async () => {
    database = await processDatabase('cli-test-');
    env = { ...database.env };
  });
  afterAll(async () => {
    try {
      await killAll();
    } finally {
      await database?.remove();
    }
  });

  it('account create prints the account with a numeric id', async () => {
    const account = parseOutput(await cli('account', 'create', '--name', 'acme'));
    // the subdomain, not given, is the name's slug
    // with the callback lifecycle's settings at their defaults (docs/api.md, "Account settings")
    expect(account).toEqual({
      id: expect.any(Number), name: 'acme', subdomain: 'acme', omnichannelRouting: false, callbackOfferTimeout: 30, callbackRetryDelay: 120, callbackMaxAttempts: 3,
      wrapUpTime: 0, apiTokenAccess: true, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), updatedAt: null,
    });
    accountId = account.id;
  });

  it.each(ROLES)('user create --role %s prints the user, without any password', async (role) => {
    const email = `${role.replace('_', '')}@acme.test`;
    const result = await cli('user', 'create', '--account', String(accountId), '--email', email, '--password', PASSWORDS[role], '--role', role, '--name', `The ${role}`);
    const user = parseOutput(result);
    expect(user).toEqual({ id: expect.any(Number), accountId, email, name: `The ${role}`, role, active: true, createdAt: expect.any(String), updatedAt: null });
    expectNoSecrets(result.stdout);
    users[role] = { id: user.id, email };
  });

  it('phone-number create --callback-enabled stores the number in E.164', async () => {
    const phone = parseOutput(await cli('phone-number', 'create', '--account', String(accountId), '--number', '+14155552671', '--callback-enabled'));
    expect(phone).toEqual({
      id: expect.any(Number), accountId, number: '+14155552671', nickname: null, callbackEnabled: true, voiceEnabled: true, smsEnabled: false, mmsEnabled: false,
      createdAt: expect.any(String), updatedAt: null,
    });
  });

  it('phone-number create refuses an invalid number with a clear message and a non-zero exit', async () => {
    const result = await cli('phone-number', 'create', '--account', String(accountId), '--number', '+1415555');
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('+1415555 is not a valid E.164 phone number');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('group create prints the group', async () => {
    const group = parseOutput(await cli('group', 'create', '--account', String(accountId), '--name', 'Support'));
    expect(group).toEqual({ id: expect.any(Number), accountId, name: 'Support', description: '', createdAt: expect.any(String), updatedAt: null });
  });

  it('account set turns omnichannel routing on and API-token sign-ins off; with neither flag it is a usage error', async () => {
    const none = await cli('account', 'set', '--id', String(accountId));
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 2, stdout: '' });
    expect(none.stderr).toMatch(/^error: account set needs --omnichannel-routing or --api-token-access\n/);
    const bad = await cli('account', 'set', '--id', String(accountId), '--api-token-access', 'no');
    expect({ code: bad.code, first: bad.stderr.split('\n')[0] }).toEqual({ code: 2, first: 'error: --api-token-access must be true or false' });
    const account = parseOutput(await cli('account', 'set', '--id', String(accountId), '--omnichannel-routing', 'true', '--api-token-access', 'false'));
    expect(account).toMatchObject({ id: accountId, name: 'acme', omnichannelRouting: true, apiTokenAccess: false, updatedAt: expect.any(String) });
  });

  it('a command on an account that does not exist says so, with a non-zero exit', async () => {
    for (const args of [['account', 'set', '--id', '999999', '--omnichannel-routing', 'true'], ['group', 'create', '--account', '999999', '--name', 'x'], ['user', 'list', '--account', '999999']]) {
      const result = await cli(...args);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 1, stdout: '', stderr: 'error: Account: 999999 does not exist\n' });
    }
  });

  it('every change the CLI made is in the audit log, made by "CLI"', async () => {
    const db = await createDb({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR, poolSize: 1 });
    try {
      const rows = await db.sql<{ action: string; source_type: string; actor_id: string | null; actor_name: string; via: string }>(
        'SELECT action, source_type, actor_id, actor_name, via FROM audit_logs WHERE account_id = $1 ORDER BY id',
        [accountId],
      );
      expect(rows.map((r) => `${r.action} ${r.source_type}`)).toEqual([
        'create account', 'create user', 'create user', 'create user', 'create voice_phone_number', 'create group', 'update account',
      ]);
      expect(rows.every((r) => r.actor_id === null && r.actor_name === 'CLI' && r.via === 'cli')).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('each list prints the created records as a JSON array', async () => {
    const accounts = parseOutput(await cli('account', 'list'));
    expect(accounts).toEqual([expect.objectContaining({ id: accountId, name: 'acme', subdomain: 'acme', omnichannelRouting: true })]);

    const userList = await cli('user', 'list', '--account', String(accountId));
    expect(parseOutput(userList).map((u: { email: string; role: string }) => [u.email, u.role])).toEqual(ROLES.map((r) => [users[r].email, r]));
    expectNoSecrets(userList.stdout);

    const phones = parseOutput(await cli('phone-number', 'list', '--account', String(accountId)));
    expect(phones).toEqual([expect.objectContaining({ number: '+14155552671', callbackEnabled: true })]);

    const groups = parseOutput(await cli('group', 'list'));
    expect(groups).toEqual([expect.objectContaining({ accountId, name: 'Support' })]);
  });

  it('account create --subdomain sets the subdomain (lower-cased); a name alone derives it, with the id when taken', async () => {
    const globex = parseOutput(await cli('account', 'create', '--name', 'Globex Corporation', '--subdomain', 'Globex'));
    expect(globex).toMatchObject({ name: 'Globex Corporation', subdomain: 'globex' });
    const twin = parseOutput(await cli('account', 'create', '--name', 'ACME!'));
    expect(twin).toMatchObject({ name: 'ACME!', subdomain: `acme-${twin.id}` });
    parseOutput(await cli('user', 'create', '--account', String(globex.id), '--email', users.agent.email, '--password', 'globex-agent-pw', '--role', 'agent'));
    const list = parseOutput(await cli('account', 'list'));
    expect(list.map((a: { name: string; subdomain: string }) => [a.name, a.subdomain])).toEqual([
      ['acme', 'acme'],
      ['Globex Corporation', 'globex'],
      ['ACME!', `acme-${twin.id}`],
    ]);
  });

  it.each([
    [['--subdomain', 'acme'], 'Subdomain: acme is already taken'],
    [['--subdomain', 'no_underscores'], 'Subdomain: no_underscores must be letters a-z, digits and "-", neither first nor last'],
    [['--subdomain=-dash'], 'Subdomain: -dash must be letters a-z, digits and "-", neither first nor last'],
    [['--subdomain', 'x'.repeat(64)], 'Subdomain: is too long (maximum is 63 characters)'],
  ])('account create %j refuses with a clear message and a non-zero exit', async (args, message) => {
    const result = await cli('account', 'create', '--name', `refused ${args.join(' ')}`, ...args);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`error: ${message}\n`);
  });

  it('the server serves the same database: every created user logs in with Basic auth', async () => {
    server = await startServer({ ...env, ADMIN_PASSWORD: 'bootstrap-admin-pw' });
    for (const role of ROLES) {
      const res = await graphqlOverHttp(server.url, ME, { authorization: basicHeader(users[role].email, PASSWORDS[role]) });
      expect(res.status).toBe(200);
      expect(res.body.data!.me).toEqual({ email: users[role].email, role: role.toUpperCase() });
    }
    const wrong = await graphqlOverHttp(server.url, ME, { authorization: basicHeader(users.agent.email, PASSWORDS.admin) });
    expect(wrong.status).toBe(401);
    // users existed already, so no "default" account or bootstrap admin was made
    expect(server.logs.join('\n')).not.toContain('created account');
  });

  it('an email held in two accounts: the plain host logs in to the older account, the subdomain host to its own', async () => {
    const login = (password: string, host?: string) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const payload = JSON.stringify({ query: ME });
        const req = request(
          `${server!.url}/graphql`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: basicHeader(users.agent.email, password), ...(host ? { host } : {}) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    expect((await login(PASSWORDS.agent)).body.data.me).toEqual({ email: users.agent.email, role: 'AGENT' });
    expect((await login('globex-agent-pw')).status).toBe(401);
    expect((await login('globex-agent-pw', `globex.localhost:${server!.port}`)).body.data.me).toEqual({ email: users.agent.email, role: 'AGENT' });
    expect((await login(PASSWORDS.agent, `globex.localhost:${server!.port}`)).status).toBe(401);
    expect((await login(PASSWORDS.agent, `acme.localhost:${server!.port}`)).body.data.me).toEqual({ email: users.agent.email, role: 'AGENT' });
  });

  describeOnPglite('the embedded database belongs to one process at a time', () => {
    it('while the server runs, the CLI fails fast saying the database is in use', async () => {
      const result = await cli('user', 'list');
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull(); // exited by itself, not killed by the timeout
      expect(result.ms).toBeLessThan(8000);
      expect(result.stderr).toContain('in use');
      expect(result.stdout).toBe('');
    });

    it('a second server on the same DATA_DIR fails the same way, and the first keeps serving', async () => {
      let error: unknown;
      try {
        await startServer({ ...env, ADMIN_PASSWORD: 'bootstrap-admin-pw' });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ProcessExitedError);
      const exited = error as ProcessExitedError;
      expect(exited.status.code).not.toBe(0);
      expect(exited.status.code).not.toBeNull();
      expect(exited.ms).toBeLessThan(8000);
      expect(exited.logs.join('\n')).toContain('in use');

      // the failed attempt left the lock (and the database) to its owner
      expect(readFileSync(path.join(env.DATA_DIR, 'server.lock'), 'utf8')).toBe(String(server!.pid));
      const res = await graphqlOverHttp(server!.url, ME, { authorization: basicHeader(users.agent.email, PASSWORDS.agent) });
      expect(res.body.data!.me.email).toBe(users.agent.email);
    });
  });

  it('the server stops on SIGTERM with exit code 0', async () => {
    expect(await server!.stop()).toBe(0);
    expect(server!.logs.join('\n')).toContain('shutting down');
    if (!onPostgres) expect(existsSync(path.join(env.DATA_DIR, 'server.lock'))).toBe(false);
  });

  it('the data survives the restart: the CLI and a new server still see everything', async () => {
    const userList = parseOutput(await cli('user', 'list', '--account', String(accountId)));
    expect(userList.map((u: { email: string }) => u.email)).toEqual(ROLES.map((r) => users[r].email));

    server = await startServer({ ...env, ADMIN_PASSWORD: 'bootstrap-admin-pw' });
    const res = await graphqlOverHttp(server.url, ME, { authorization: basicHeader(users.end_user.email, PASSWORDS.end_user) });
    expect(res.body.data!.me).toEqual({ email: users.end_user.email, role: 'END_USER' });
    expect(await server.stop()).toBe(0);
  });

  describeOnPglite('after a crash', () => {
    it('a lock left by a killed server is taken over, and the data is intact', async () => {
      server = await startServer({ ...env, ADMIN_PASSWORD: 'bootstrap-admin-pw' });
      await server.kill(); // SIGKILL: no chance to release the lock
      expect(readFileSync(path.join(env.DATA_DIR, 'server.lock'), 'utf8')).toBe(String(server.pid));
      const userList = parseOutput(await cli('user', 'list', '--account', String(accountId)));
      expect(userList.map((u: { email: string }) => u.email)).toEqual(ROLES.map((r) => users[r].email));
    });
  });

  it('every CLI command exits promptly once it has printed its result', () => {
    expect(results.length).toBeGreaterThanOrEqual(10);
    // before the fix in src/db/schema-engine.ts each command lingered ~10 s
    expect(Math.max(...results.map((r) => r.lingerMs))).toBeLessThan(5000);
  });
});
