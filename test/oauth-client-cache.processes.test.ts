import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, startServer, type ServerHandle } from './helpers/processes';

// docs/api.md, "Client authentication": the grant endpoints keep a client that authenticated
// with its secret in their process for a minute, so client_credentials, refresh_token and
// introspection are one statement. Yet a change made on another process takes effect on the
// very next request: the statement checks the cached client still holds (type, scopes, the
// matched secret live) and, when not, the endpoint looks the client up again. Two real server
// processes, real HTTP, one PostgreSQL.
describeOnPostgres('the grant endpoints’ client cache across server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let a: ServerHandle;
  let b: ServerHandle;
  const env = () => ({ DATABASE_URL: database.url, ADMIN_PASSWORD: 'admin-password-1', HASH_KEY: 'shared-hash-key-for-both-processes-0123', LOG_LEVEL: 'info' });
  const admin = `Basic ${Buffer.from('admin@example.com:admin-password-1').toString('base64')}`;
  const send = async (server: ServerHandle, method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, { method, headers: { authorization: admin, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, any> };
  };
  const clientAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  /** A form POST to a protocol endpoint with the client's Basic credentials: status and JSON body. */
  const protocol = async (server: ServerHandle, path: string, auth: string, form: Record<string, string>) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const grant = (server: ServerHandle, auth: string, scope = 'read') => protocol(server, '/oauth/tokens', auth, { grant_type: 'client_credentials', scope });
  const introspect = (server: ServerHandle, auth: string, token: string) => protocol(server, '/oauth/introspect', auth, { token });
  const newClient = async (scopes = 'read write') => {
    const res = await send(a, 'POST', '/api/v2/oauth/clients.json', { client: { name: 'Cached', client_type: 'confidential', scopes, redirect_uris: ['https://app.example.com/cb'] } });
    expect(res.status).toBe(201);
    return { id: res.body.id as number, identifier: res.body.client_identifier as string, auth: clientAuth(res.body.client_identifier, res.body.client_secret) };
  };
  /** Both processes have authenticated the client (so each holds it in its cache). */
  const warm = async (auth: string) => {
    for (const server of [a, b, b]) expect((await grant(server, auth)).status).toBe(200);
  };

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    a = await startServer(env());
    b = await startServer(env());
  }, 180_000);
  afterAll(async () => {
    await killAll();
    await database.drop();
  });

  it('a secret regenerated on one process: the old secret fails on the other on its very next request, the new one works', async () => {
    const client = await newClient();
    await warm(client.auth);
    const token = (await grant(b, client.auth)).body.access_token as string;
    expect((await introspect(b, client.auth, token)).body.active).toBe(true);
    const regenerated = await send(a, 'PUT', `/api/v2/oauth/clients/${client.id}/generate_secret.json`);
    expect(regenerated.status).toBe(200);
    for (const refused of [await grant(b, client.auth), await introspect(b, client.auth, token)]) {
      expect(refused).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
    }
    const fresh = clientAuth(client.identifier, regenerated.body.client_secret);
    expect((await grant(b, fresh)).status).toBe(200);
    // the token issued before lives on (only the secret changed)
    expect((await introspect(b, fresh, token)).body.active).toBe(true);
  }, 60_000);

  it('with a grace period the old secret keeps working on the other process; once the grace period is ended there, it fails next', async () => {
    const client = await newClient();
    await warm(client.auth);
    const regenerated = await send(a, 'PUT', `/api/v2/oauth/clients/${client.id}/generate_secret.json`, { client: { grace_period: 3600 } });
    expect(regenerated.status).toBe(200);
    expect((await grant(b, client.auth)).status).toBe(200);
    const ended = await fetch(`${a.url}/graphql`, {
      method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `mutation { endOAuthClientSecretGracePeriod(id: "${client.id}") { id } }` }),
    });
    expect(((await ended.json()) as { errors?: unknown }).errors).toBeUndefined();
    expect((await grant(b, client.auth)).status).toBe(401);
    expect((await grant(b, clientAuth(client.identifier, regenerated.body.client_secret))).status).toBe(200);
  }, 60_000);

  it('a client deleted on one process is unknown to the other on its very next request', async () => {
    const client = await newClient();
    await warm(client.auth);
    expect((await send(a, 'DELETE', `/api/v2/oauth/clients/${client.id}.json`)).status).toBe(204);
    expect(await grant(b, client.auth)).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
  }, 60_000);

  it('scopes narrowed on one process: the other grants only the new scopes on its very next request', async () => {
    const client = await newClient('read write');
    await warm(client.auth);
    expect((await grant(b, client.auth, 'write')).body.scope).toBe('write');
    expect((await send(a, 'PUT', `/api/v2/oauth/clients/${client.id}.json`, { client: { scopes: 'read' } })).status).toBe(200);
    expect(await grant(b, client.auth, 'write')).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid_scope' }) });
    expect((await grant(b, client.auth, 'read')).body.scope).toBe('read');
  }, 60_000);
});
