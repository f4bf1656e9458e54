import * as oauth from 'oauth4webapi';
import { createDb } from '../src/db/create-db';
import { verifyPassword } from '../src/domain/auth/passwords';
import { pagesBrowser, signInToConsent } from './helpers/authorize-pages';
import { basicClientAuth, INSECURE, REDIRECT, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';
import { onPostgres } from './helpers/postgres';
import { killAll, runCli, startServer, tempDir, type CliResult, type ServerHandle } from './helpers/processes';
import { basicHeader, TEST_HASH_KEY, type TestUser } from './helpers/test-app';

// docs/api.md, "Operations": `npm run cli -- user reset-password --email … [--account …]`,
// end to end with real processes. An admin holds an OAuth grant (a refresh token), an
// API token and a sign-in session of the authorization pages; the operator resets their
// password with the CLI; a server process on the same database then refuses the old
// password, the refresh token and the session, and accepts the printed password. The
// same email in a second account makes --account necessary.

// Process start-up dominates: the CLI opens the database and checks migrations.
jest.setTimeout(120_000);

describe('npm run cli -- user reset-password', () => {
  let data: ReturnType<typeof tempDir>;
  let s: OAuthStack;
  let app: RegisteredClient;
  let user: TestUser;
  let otherAccount: bigint;
  let env: Record<string, string>;
  let server: ServerHandle | undefined;
  let granted: oauth.TokenEndpointResponse;
  let kept: oauth.TokenEndpointResponse;
  let apiToken: string;
  let authorizeUrl: string;
  const cookies: Record<'user' | 'admin', string> = { user: '', admin: '' };
  let reset: { user: { id: number; accountId: number; email: string; updatedAt: string }; password: string; revokedTokens: number };
  /** The stack's in-process database, closed before the CLI runs on PGlite (one process at a time there). */
  let stackOpen = true;

  const cli = (...args: string[]) => runCli(['user', 'reset-password', ...args], env);
  const closeStack = async () => {
    if (stackOpen) await s.close();
    stackOpen = false;
  };

  beforeAll(async () => {
    data = tempDir('cli-reset-password-');
    // PGlite: a database in DATA_DIR; PostgreSQL: the stack's fresh database. The server and the
    // CLI get the stack's HASH_KEY, so that its tokens and session cookies are theirs too.
    s = await startOAuthStack({ dataDir: data.path });
    env = { ...(onPostgres ? { DATABASE_URL: s.ctx.db.url! } : {}), DATA_DIR: data.path, HASH_KEY: TEST_HASH_KEY.toString('utf8') };
    // an admin (who may make API tokens) whose email a user of another account has too
    user = await s.ctx.createUser(s.admin.accountId, 'admin', { email: 'pat@acme.test', password: 'pat-first-password' });
    app = await s.register({ type: 'confidential' });
    otherAccount = await s.ctx.createAccount();
    await s.ctx.createUser(otherAccount, 'agent', { email: user.email, password: 'other-account-password' });

    // the user's grant (authorization code flow), and an API token they made with Basic
    const codeFlow = async (who: TestUser) => {
      const verifier = oauth.generateRandomCodeVerifier();
      const params = oauth.validateAuthResponse(s.as, app.client, await s.authorize(app, { user: who, verifier, state: 'st' }), 'st');
      const res = await oauth.authorizationCodeGrantRequest(s.as, app.client, oauth.ClientSecretBasic(app.secret), params, REDIRECT, verifier, INSECURE);
      const tokens = await oauth.processAuthorizationCodeResponse(s.as, app.client, res);
      expect(tokens.refresh_token).toEqual(expect.any(String));
      return tokens;
    };
    granted = await codeFlow(user);
    // another admin's grant, which the reset leaves alone
    kept = await codeFlow(s.admin);
    const made = await s.ctx.inject({ method: 'POST', url: '/api/v2/oauth/tokens', headers: { authorization: user.basic }, payload: { token: { client_id: app.id, scopes: ['read'] } } });
    expect(made.statusCode).toBe(201);
    apiToken = made.json().token.token;

    // sign-in sessions of the authorization pages: the user's, and the other admin's (whose password stays)
    // (of another app: the grants above would be remembered for `app`, with no consent page to show)
    const pagesApp = await s.register({ type: 'confidential' });
    authorizeUrl = `/oauth/authorizations/new?${new URLSearchParams({ response_type: 'code', client_id: pagesApp.identifier, redirect_uri: REDIRECT, scope: 'read', state: 'x' })}`;
    for (const who of ['user', 'admin'] as const) {
      const browser = pagesBrowser(s.ctx);
      const consent = await signInToConsent(browser, authorizeUrl, who === 'user' ? user : s.admin);
      expect(consent.body).toContain('value="allow"');
      cookies[who] = [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    }
  });
  afterAll(async () => {
    try {
      await killAll();
      await closeStack();
    } finally {
      data?.remove();
    }
  });

  /** Fails with the process's output in view when it did not succeed. */
  const parseOutput = (result: CliResult) => {
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(result.stdout);
  };

  it('an email held in two accounts, without --account: refused, naming both account ids, nothing changed', async () => {
    if (!onPostgres) await closeStack();
    const result = await cli('--email', user.email);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`error: ${user.email} is a user in several accounts (${user.accountId}, ${otherAccount}): say which with --account <id>\n`);
  });

  it('an unknown email (anywhere, or in the account given): a clear error and a non-zero exit', async () => {
    const nobody = await cli('--email', 'nobody@example.com');
    expect({ code: nobody.code, stdout: nobody.stdout, stderr: nobody.stderr }).toEqual({ code: 1, stdout: '', stderr: 'error: no user has the email nobody@example.com in any account\n' });
    const elsewhere = await cli('--email', s.admin.email, '--account', String(otherAccount));
    expect({ code: elsewhere.code, stdout: elsewhere.stdout, stderr: elsewhere.stderr }).toEqual({
      code: 1, stdout: '', stderr: `error: no user has the email ${s.admin.email} in account ${otherAccount}\n`,
    });
    const missing = await cli('--account', String(user.accountId));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('error: --email is required');
  });

  it('with --account: prints the user and a new generated password, once, and how many tokens it revoked', async () => {
    const result = await cli('--email', user.email.toUpperCase(), '--account', String(user.accountId));
    reset = parseOutput(result);
    expect(reset).toEqual({
      user: expect.objectContaining({ id: Number(user.id), accountId: Number(user.accountId), email: user.email, role: 'admin', updatedAt: expect.any(String) }),
      password: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
      revokedTokens: 1,
    });
    expect(result.stdout).not.toMatch(/passwordHash|scrypt\$/);
  });

  it('is audited as made by the CLI, with the user.updated event, like a password change', async () => {
    const db = await createDb({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR, poolSize: 1 });
    try {
      const audit = await db.sql<{ action: string; source_type: string; source_id: string; actor_name: string; via: string; changed_fields: string[]; change_description: string }>(
        "SELECT action, source_type, source_id::text AS source_id, actor_name, via, changed_fields, change_description FROM audit_logs WHERE account_id = $1 AND via = 'cli' ORDER BY id",
        [String(user.accountId)],
      );
      expect(audit).toEqual([
        expect.objectContaining({ action: 'destroy', source_type: 'oauth_token', actor_name: 'CLI', change_description: 'Revoked with its grant: the password of its user changed' }),
        {
          action: 'update', source_type: 'user', source_id: String(user.id), actor_name: 'CLI', via: 'cli', changed_fields: ['password'],
          change_description: 'Password reset from the CLI; 1 token revoked',
        },
      ]);
      const events = await db.sql<{ event: { changes?: unknown; revoked_token_count: number } }>(
        "SELECT event FROM events WHERE account_id = $1 AND type = 'zen:event-type:user.updated' AND subject = $2",
        [String(user.accountId), `zen:user:${user.id}`],
      );
      expect(events).toHaveLength(1);
      expect(events[0].event).toMatchObject({ revoked_token_count: 1 });
      expect(JSON.stringify(events[0])).not.toContain(reset.password);
      // the other account's user with the same email kept their password, and nothing is recorded there
      const [other] = await db.sql<{ password_hash: string }>('SELECT password_hash FROM users WHERE account_id = $1', [String(otherAccount)]);
      expect(await verifyPassword('other-account-password', other.password_hash)).toBe(true);
      const [recorded] = await db.sql<{ n: string }>("SELECT count(*)::text AS n FROM audit_logs WHERE account_id = $1 AND via = 'cli'", [String(otherAccount)]);
      expect(recorded.n).toBe('0');
    } finally {
      await db.close();
    }
  });

  describe('a server process on the same database, after the reset', () => {
    beforeAll(async () => {
      server = await startServer(env);
    });
    afterAll(async () => {
      expect(await server?.stop()).toBe(0);
    });

    const me = async (email: string, password: string) => (await fetch(`${server!.url}/api/v2/users/me.json`, { headers: { authorization: basicHeader(email, password) } })).status;

    it('the printed password signs in (GET /api/v2/users/me.json → 200); the old one gets 401', async () => {
      expect(await me(user.email, reset.password)).toBe(200);
      expect(await me(user.email, user.password)).toBe(401);
    });

    it("the user's refresh token and the access token of that grant no longer work; the API token and another admin's grant stay", async () => {
      const refresh = (refreshToken: string) =>
        fetch(`${server!.url}/oauth/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicClientAuth(app.identifier, app.secret) },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
        });
      const refused = await refresh(granted.refresh_token!);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
      expect((await refresh(kept.refresh_token!)).status).toBe(200);
      const current = (token: string) => fetch(`${server!.url}/api/v2/oauth/tokens/current.json`, { headers: { authorization: `Bearer ${token}` } });
      expect((await current(granted.access_token)).status).toBe(401);
      expect((await current(apiToken)).status).toBe(200);
    });

    it("the user's sign-in session of the authorization pages has ended (another admin's has not)", async () => {
      const page = async (cookie: string) => (await fetch(`${server!.url}${authorizeUrl}`, { headers: { cookie } })).text();
      expect(await page(cookies.user)).toContain('<h1>Sign in</h1>');
      expect(await page(cookies.admin)).toContain('value="allow"');
    });
  });

  it('an email of one account needs no --account', async () => {
    const solo = await runCli(['user', 'create', '--account', String(user.accountId), '--email', 'solo@acme.test', '--password', 'solo-first-password', '--role', 'agent'], env);
    expect(solo.code).toBe(0);
    const result = parseOutput(await cli('--email', 'solo@acme.test'));
    expect(result).toEqual({ user: expect.objectContaining({ email: 'solo@acme.test', accountId: Number(user.accountId) }), password: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/), revokedTokens: 0 });
    expect(result.password).not.toBe(reset.password);
  });
});
