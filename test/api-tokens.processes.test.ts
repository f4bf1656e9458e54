import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, startServer, type ServerHandle } from './helpers/processes';

// docs/api.md, "API tokens": a token sign-in is cached per process (no KDF per request), yet a
// deleted token, a deactivated user or api_token_access turned off refuses the very next
// request on every process: each request re-reads the token row by its hash. Real processes,
// real HTTP, one PostgreSQL.
describeOnPostgres('API token sign-ins across server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let a: ServerHandle;
  let b: ServerHandle;
  const env = () => ({ DATABASE_URL: database.url, ADMIN_PASSWORD: 'admin-password-1', HASH_KEY: 'shared-hash-key-for-both-processes-0123', LOG_LEVEL: 'info' });
  const admin = `Basic ${Buffer.from('admin@example.com:admin-password-1').toString('base64')}`;
  const tokenBasic = (email: string, token: string) => `Basic ${Buffer.from(`${email}/token:${token}`).toString('base64')}`;
  const send = (server: ServerHandle, method: string, url: string, body?: unknown) =>
    fetch(`${server.url}${url}`, { method, headers: { authorization: admin, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const me = async (server: ServerHandle, authorization: string) => (await fetch(`${server.url}/api/v2/users/me.json`, { headers: { authorization } })).status;
  const newToken = async () => ((await (await send(a, 'POST', '/api/v2/api_tokens', { api_token: { description: 'processes' } })).json()) as { api_token: { id: number; token: string } }).api_token;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    a = await startServer(env());
    b = await startServer(env());
  }, 180_000);
  afterAll(async () => {
    await killAll();
    await database.drop();
  });

  it('a token deleted on one process fails on the other on its very next request', async () => {
    const { id, token } = await newToken();
    const auth = tokenBasic('admin@example.com', token);
    // both processes have verified (and cached) it
    expect([await me(a, auth), await me(b, auth), await me(b, auth)]).toEqual([200, 200, 200]);
    expect((await send(a, 'DELETE', `/api/v2/api_tokens/${id}`)).status).toBe(204);
    expect(await me(b, auth)).toBe(401);
  }, 60_000);

  it('api_token_access turned off on one process refuses the next token sign-in on the other; on again, it works', async () => {
    const { token } = await newToken();
    const auth = tokenBasic('admin@example.com', token);
    expect([await me(a, auth), await me(b, auth)]).toEqual([200, 200]);
    expect((await send(a, 'PUT', '/api/v2/account/settings', { settings: { api_token_access: false } })).status).toBe(200);
    expect(await me(b, auth)).toBe(401);
    // admins still manage tokens (and sign in with their password)
    expect((await send(b, 'GET', '/api/v2/api_tokens')).status).toBe(200);
    expect((await send(b, 'PUT', '/api/v2/account/settings', { settings: { api_token_access: true } })).status).toBe(200);
    expect(await me(a, auth)).toBe(200);
  }, 60_000);

  it('a user deactivated on one process is refused on the other on the next request', async () => {
    const { token } = await newToken();
    const created = await send(a, 'POST', '/api/v2/users', { user: { name: 'Agent', email: 'agent@example.com', role: 'agent' } });
    const userId = ((await created.json()) as { user: { id: number } }).user.id;
    const auth = tokenBasic('agent@example.com', token);
    expect([await me(a, auth), await me(b, auth)]).toEqual([200, 200]);
    expect((await send(a, 'DELETE', `/api/v2/users/${userId}`)).status).toBe(200);
    expect(await me(b, auth)).toBe(401);
  }, 60_000);
});
