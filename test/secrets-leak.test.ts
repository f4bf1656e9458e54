import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createDb, type Db } from '../src/db/create-db';
import { hmacHex, randomUrlSafe, sha256Hex } from '../src/domain/crypto';
import { systemActor } from '../src/domain/audit/audit-log.repository';
import { createServices } from '../src/domain/services';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, runToExit, SERVER_JS, startServer, tempDir, type ServerHandle } from './helpers/processes';
import { basicHeader, createTestApp, DEFAULT_LIMITS, TEST_HASH_KEY, type TestContext } from './helpers/test-app';
import { withPrisma, type TestDb } from './helpers/test-db';

// docs/api.md, "Authentication", "OAuth clients", "OAuth tokens": client secrets and access tokens are stored only as keyed
// hashes plus their first 10 characters, and neither they nor passwords are ever
// logged. A realistic session issues, uses, regenerates and revokes secrets; then
// the whole database and every log line are searched for each of them.

jest.setTimeout(120_000);

interface Reply {
  status: number;
  body: any;
}
/** One HTTP exchange, in-process (inject) or over the network (fetch). */
type Send = (method: string, path: string, options?: { auth?: string; body?: unknown; query?: string; headers?: Record<string, string> }) => Promise<Reply>;

interface Credentials {
  admin: { email: string; password: string };
  agent: { email: string; password: string };
  endUser: { email: string; password: string };
}

interface Issued {
  /** every full client secret and access token the service handed out, and one it never issued */
  secrets: string[];
  tokens: string[];
  /** passwords presented, right and wrong, and the Basic credentials that carried them */
  passwords: string[];
}

function expectStatus(reply: Reply, status: number, what: string): Reply {
  expect({ what, status: reply.status, body: reply.status === status ? undefined : reply.body }).toEqual({ what, status, body: undefined });
  return reply;
}

async function graphql(send: Send, auth: string, query: string, variables: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const reply = await send('POST', '/graphql', { auth, body: { query, variables } });
  expect(reply.body.errors).toBeUndefined();
  return reply.body.data;
}

/** The session: clients over REST and GraphQL, secrets regenerated, tokens created, used, revoked, clients deleted, failed logins. */
async function runFlow(send: Send, who: Credentials): Promise<Issued> {
  const admin = basicHeader(who.admin.email, who.admin.password);
  const agent = basicHeader(who.agent.email, who.agent.password);
  const endUser = basicHeader(who.endUser.email, who.endUser.password);
  const secrets: string[] = [];
  const tokens: string[] = [];
  const passwords = [who.admin.password, who.agent.password, who.endUser.password];
  // the Basic credentials as sent (base64 of email:password)
  const presented = [admin, agent, endUser];
  const bearer = (token: string) => `Bearer ${token}`;

  // Clients: one over REST, two over GraphQL.
  const restClient = expectStatus(
    await send('POST', '/api/v2/oauth/clients', { auth: admin, body: { name: 'REST app', scopes: 'read write', redirect_uris: 'https://rest.example.com/cb' } }),
    201,
    'create client (REST)',
  ).body;
  secrets.push(restClient.client_secret);
  const clientInput = (name: string) => ({ name, scopes: 'read write', redirectUris: ['https://gql.example.com/cb'], clientType: 'CONFIDENTIAL' });
  const CREATE_CLIENT = 'mutation($input: OAuthClientInput!) { createOAuthClient(input: $input) { id clientSecret } }';
  const kept = (await graphql(send, admin, CREATE_CLIENT, { input: clientInput('GraphQL app') })).createOAuthClient;
  const doomed = (await graphql(send, admin, CREATE_CLIENT, { input: clientInput('GraphQL app to delete') })).createOAuthClient;
  secrets.push(kept.clientSecret, doomed.clientSecret);

  // Secrets regenerated through both REST paths and GraphQL.
  for (const path of [`/api/v2/oauth/clients/${restClient.id}/client_secret`, `/api/v2/oauth/clients/${restClient.id}.json`]) {
    secrets.push(expectStatus(await send('POST', path, { auth: admin }), 200, `regenerate ${path}`).body.client_secret);
  }
  const REGENERATE = 'mutation($id: ID!) { generateOAuthClientSecret(id: $id) { clientSecret } }';
  for (const id of [kept.id, doomed.id, kept.id]) secrets.push((await graphql(send, admin, REGENERATE, { id })).generateOAuthClientSecret.clientSecret);
  expectStatus(await send('PUT', `/api/v2/oauth/clients/${restClient.id}`, { auth: admin, body: { name: 'REST app, renamed' } }), 200, 'update client');
  expect(expectStatus(await send('GET', '/api/v2/oauth/clients', { auth: admin }), 200, 'list clients').body).toHaveLength(3);

  // Tokens: over REST (body and query parameter) and GraphQL, one with an invalid scope.
  const restToken = async (clientId: number, scopes: string[], query = '') =>
    expectStatus(await send('POST', `/api/v2/oauth/tokens${query}`, { auth: admin, body: { token: query ? { scopes } : { client_id: clientId, scopes } } }), 201, 'create token (REST)').body
      .token;
  const t1 = await restToken(restClient.id, ['read', 'write']);
  const t2 = await restToken(restClient.id, ['read', 'write', 'impersonate'], `?client_id=${restClient.id}`);
  const CREATE_TOKEN = 'mutation($input: CreateOAuthTokenInput!) { createOAuthToken(input: $input) { id token } }';
  const t3 = (await graphql(send, admin, CREATE_TOKEN, { input: { clientId: kept.id, scopes: ['read', 'write'] } })).createOAuthToken;
  const t4 = (await graphql(send, admin, CREATE_TOKEN, { input: { clientId: kept.id, scopes: ['read'] } })).createOAuthToken;
  const t5 = (await graphql(send, admin, CREATE_TOKEN, { input: { clientId: doomed.id, scopes: ['read', 'tickets:delete'] } })).createOAuthToken;
  const t6 = (await graphql(send, admin, CREATE_TOKEN, { input: { clientId: kept.id, scopes: ['read'] } })).createOAuthToken;
  tokens.push(t1.token, t2.token, t3.token, t4.token, t5.token, t6.token);

  // Used: REST and GraphQL, current token, listing, impersonation, a forbidden scope.
  expectStatus(await send('GET', '/api/v2/oauth/tokens/current.json', { auth: bearer(t1.token) }), 200, 'current token');
  expect((await graphql(send, bearer(t3.token), '{ me { email } currentOAuthToken { id token } }')).me.email).toBe(who.admin.email);
  expectStatus(await send('GET', '/api/v2/oauth/tokens?per_page=10', { auth: bearer(t2.token) }), 200, 'list tokens with a token');
  const impersonated = await send('POST', '/graphql', { auth: bearer(t2.token), headers: { 'x-on-behalf-of': who.endUser.email }, body: { query: '{ me { email } }' } });
  expect(impersonated.body.data.me.email).toBe(who.endUser.email);
  expectStatus(await send('GET', '/api/v2/oauth/clients', { auth: bearer(t5.token) }), 403, 'token with an invalid scope');
  expect((await graphql(send, bearer(t6.token), '{ oauthTokens(first: 10) { totalCount } }')).oauthTokens.totalCount).toBe(6);
  // Tokens where they do not belong: a query string, a made-up token.
  expectStatus(await send('GET', '/api/v2/oauth/tokens/current.json', { query: `access_token=${t4.token}` }), 401, 'token in the query string');
  const madeUp = randomUrlSafe(32);
  tokens.push(madeUp);
  expectStatus(await send('GET', '/api/v2/oauth/tokens/current.json', { auth: bearer(madeUp) }), 401, 'unknown token');

  // Revoked: by id (REST, GraphQL) and as the current token (REST, GraphQL); then refused.
  expectStatus(await send('DELETE', `/api/v2/oauth/tokens/${t1.id}.json`, { auth: admin }), 204, 'revoke by id (REST)');
  expectStatus(await send('DELETE', '/api/v2/oauth/tokens/current', { auth: bearer(t2.token) }), 204, 'revoke current (REST)');
  expect((await graphql(send, admin, 'mutation($id: ID!) { revokeOAuthToken(id: $id) }', { id: t3.id })).revokeOAuthToken).toBe(true);
  expect((await graphql(send, bearer(t4.token), 'mutation { revokeCurrentOAuthToken }')).revokeCurrentOAuthToken).toBe(true);
  for (const token of [t1, t2, t3, t4]) expectStatus(await send('GET', '/api/v2/oauth/tokens/current', { auth: bearer(token.token) }), 401, 'revoked token');

  // Clients deleted over REST and GraphQL (their tokens go with them).
  expectStatus(await send('DELETE', `/api/v2/oauth/clients/${restClient.id}`, { auth: admin }), 204, 'delete client (REST)');
  expect((await graphql(send, admin, 'mutation($id: ID!) { deleteOAuthClient(id: $id) }', { id: doomed.id })).deleteOAuthClient).toBe(true);
  expectStatus(await send('GET', '/api/v2/oauth/tokens/current', { auth: bearer(t5.token) }), 401, 'token of a deleted client');

  // Failed logins (wrong passwords, an unknown email), then the right ones.
  const wrong = ['Guess-0ne-of-many', 'Guess-Tw0-of-many', `${who.admin.password}x`];
  passwords.push(...wrong);
  for (const password of wrong) {
    const wrongPassword = basicHeader(who.admin.email, password);
    const unknownEmail = basicHeader(`nobody-${password.length}@example.com`, password);
    presented.push(wrongPassword, unknownEmail);
    expectStatus(await send('GET', '/api/v2/oauth/clients', { auth: wrongPassword }), 401, 'wrong password');
    expectStatus(await send('POST', '/graphql', { auth: unknownEmail, body: { query: '{ me { id } }' } }), 401, 'unknown email');
  }
  const mixedUp = basicHeader(who.agent.email, who.endUser.password);
  presented.push(mixedUp);
  expectStatus(await send('POST', '/graphql', { auth: mixedUp, body: { query: '{ me { id } }' } }), 401, 'another user’s password');
  expect((await graphql(send, agent, '{ me { email } }')).me.email).toBe(who.agent.email);
  expectStatus(await send('GET', '/api/v2/oauth/clients', { auth: agent }), 403, 'agent on clients');
  expect((await graphql(send, endUser, '{ me { role } }')).me.role).toBe('END_USER');
  expect((await graphql(send, admin, '{ me { role } }')).me.role).toBe('ADMIN');

  expect(new Set([...secrets, ...tokens]).size).toBe(secrets.length + tokens.length);
  for (const value of [...secrets, ...tokens]) expect(value).toMatch(/^[A-Za-z0-9_-]{43,}$/);
  return { secrets, tokens, passwords: [...passwords, ...presented.map((header) => header.slice('Basic '.length))] };
}

/** Every value of `needles` found in `haystack`, with where (for a readable failure). */
function occurrences(haystack: string, needles: string[]): string[] {
  return needles.filter((n) => haystack.includes(n)).map((n) => `${n} at …${haystack.slice(Math.max(0, haystack.indexOf(n) - 80), haystack.indexOf(n) + 80)}…`);
}

/** Every row of every table of the public schema, as text. */
async function selectEverything(db: Db): Promise<string> {
  const tables = await db.sql<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['oauth_clients', 'oauth_tokens', 'users', 'rate_window_hits']));
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const rows = await db.sql(`SELECT * FROM "${table_name}"`);
    parts.push(`-- ${table_name}\n${JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v), 1)}`);
  }
  return parts.join('\n');
}

const PG_DUMP = existsSync('/usr/lib/postgresql/15/bin/pg_dump') ? '/usr/lib/postgresql/15/bin/pg_dump' : 'pg_dump';

/** pg_dump of the whole database (schema and data), over TCP. */
function pgDump(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(PG_DUMP, ['--dbname', url, '--no-owner'], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`pg_dump failed: ${stderr}`, { cause: err })) : resolve(stdout),
    );
  });
}

async function dumpDatabase(db: Db, url: string | undefined): Promise<string> {
  const dump = url ? await pgDump(url) : await selectEverything(db);
  expect(dump).toContain('oauth_tokens');
  return dump;
}

/** What both runs assert: nothing issued or presented shows up; what should be there is. */
async function expectNoLeaks(issued: Issued, dump: string, logs: string, db: TestDb, hashKey: Buffer): Promise<void> {
  // The dump and the logs are real: they hold the prefixes, the emails and the requests.
  expect(logs).toContain('"msg":"request"');
  const liveTokens = await db.prisma.oAuthToken.findMany();
  expect(liveTokens.length).toBeGreaterThanOrEqual(6);
  for (const row of liveTokens) expect(dump).toContain(row.tokenPrefix);

  expect(occurrences(dump, issued.secrets)).toEqual([]);
  expect(occurrences(dump, issued.tokens)).toEqual([]);
  expect(occurrences(dump, issued.passwords)).toEqual([]);
  expect(occurrences(logs, issued.secrets)).toEqual([]);
  expect(occurrences(logs, issued.tokens)).toEqual([]);
  expect(occurrences(logs, issued.passwords)).toEqual([]);

  // Keyed hashes: a stolen dump does not let anyone test a guess without the key.
  expect(occurrences(dump, [...issued.secrets, ...issued.tokens].map(sha256Hex))).toEqual([]);
  const byHash = new Map(liveTokens.map((row) => [row.tokenHash, row]));
  const issuedTokens = issued.tokens.filter((t) => byHash.has(hmacHex(hashKey, t)));
  expect(issuedTokens).toHaveLength(6); // all but the made-up one, revoked or not
  for (const token of issuedTokens) {
    const row = byHash.get(hmacHex(hashKey, token))!;
    expect(row.tokenHash).not.toBe(sha256Hex(token));
    expect(row.tokenPrefix).toBe(token.slice(0, 10));
  }
  const kept = await db.prisma.oAuthClient.findMany({ include: { secrets: true } });
  expect(kept).toHaveLength(1);
  expect(kept[0].secrets).toHaveLength(1);
  // the last secret regenerated is the kept client's current one
  expect(kept[0].secrets[0].secretHash).toBe(hmacHex(hashKey, issued.secrets[issued.secrets.length - 1]));
  expect(kept[0].secrets[0].secretHash).not.toBe(sha256Hex(issued.secrets[issued.secrets.length - 1]));
}

describe('secrets never leak: in-process app, database dump and captured logs', () => {
  let ctx: TestContext;
  let who: Credentials;

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    who = {
      admin: await ctx.createUser(account, 'admin', { password: 'Adm1n-passw0rd-7f3a91' }),
      agent: await ctx.createUser(account, 'agent', { password: 'Ag3nt-passw0rd-c5e2b8' }),
      endUser: await ctx.createUser(account, 'end_user', { password: 'Us3r-passw0rd-9d04e6' }),
    };
  });
  afterAll(() => ctx.close());

  it('finds no secret, token or password in the database or the logs', async () => {
    const send: Send = async (method, path, { auth, body, query, headers } = {}) => {
      const res = await ctx.inject({
        method: method as never,
        url: query ? `${path}?${query}` : path,
        headers: { ...headers, ...(auth ? { authorization: auth } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      return { status: res.statusCode, body: res.body ? res.json() : undefined };
    };
    const issued = await runFlow(send, who);
    const dump = await dumpDatabase(ctx.db, ctx.db.url);
    await expectNoLeaks(issued, dump, ctx.logs.join(''), ctx.db, TEST_HASH_KEY);
  });

  it('refuses to start a production server without HASH_KEY, saying why', async () => {
    const data = tempDir('secrets-leak-');
    try {
      const result = await runToExit(SERVER_JS, [], { NODE_ENV: 'production', DATA_DIR: data.path }, { timeoutMs: 30_000 });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('HASH_KEY is required when NODE_ENV=production');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      data.remove();
    }
  });
});

describeOnPostgres('secrets never leak: a real server process (pino output) and pg_dump', () => {
  const HASH_KEY = 'secrets-leak-test-key-0123456789abcdef';
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: TestDb | undefined;
  let server: ServerHandle | undefined;
  let who: Credentials;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    who = {
      admin: { email: 'admin@example.com', password: 'B00tstrap-admin-pw-41c7' },
      agent: { email: 'agent@example.com', password: 'Ag3nt-passw0rd-2b9e5d' },
      endUser: { email: 'user@example.com', password: 'Us3r-passw0rd-6a18f0' },
    };
    // trace: the most the service ever logs
    server = await startServer({ DATABASE_URL: database.url, ADMIN_PASSWORD: who.admin.password, HASH_KEY, LOG_LEVEL: 'trace' });
    db = withPrisma(await createDb({ databaseUrl: database.url, poolSize: 2 }));
    const { accounts, users } = createServices({ db, hashKey: Buffer.from(HASH_KEY, 'utf8'), limits: DEFAULT_LIMITS });
    const account = (await accounts.list()).find((a) => a.name === 'default')!;
    await users.create(systemActor(account.id), { name: 'agent', email: who.agent.email, password: who.agent.password, role: 'agent' });
    await users.create(systemActor(account.id), { name: 'end user', email: who.endUser.email, password: who.endUser.password, role: 'end_user' });
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    await killAll();
    await db?.close();
    await database?.drop();
  }, 30_000);

  it('finds no secret, token or password in pg_dump or in the server’s stdout and stderr', async () => {
    const send: Send = async (method, path, { auth, body, query, headers } = {}) => {
      const res = await fetch(`${server!.url}${path}${query ? `?${query}` : ''}`, {
        method,
        headers: { ...headers, ...(auth ? { authorization: auth } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const issued = await runFlow(send, who);
    const dump = await pgDump(database.url);
    // stop first: every line the process wrote is then in server.logs
    expect(await server!.stop()).toBe(0);
    await expectNoLeaks(issued, dump, server!.logs.join('\n'), db!, Buffer.from(HASH_KEY, 'utf8'));
  });
});
