import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, startServer, type ServerHandle } from './helpers/processes';
import { consentAndExchange, refresh } from './helpers/authorized-apps';
import { basicHeader } from './helpers/test-app';

// Revoking an authorized app is immediate in every process (docs/api.md, "Your authorized
// apps"): two server processes on one PostgreSQL, the consent given through the real
// pages of one, the revocation on that one, and the very next request on the other.

jest.setTimeout(180_000);

const REDIRECT = 'https://app.example.com/cb';
const ADMIN = basicHeader('admin@example.com', 'admin-password-1');

describeOnPostgres('your authorized apps across server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let a: ServerHandle;
  let b: ServerHandle;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    const env = { DATABASE_URL: database.url, ADMIN_PASSWORD: 'admin-password-1', HASH_KEY: 'authorized-apps-processes-key-0123456789' };
    a = await startServer(env);
    b = await startServer(env);
  }, 180_000);
  afterAll(async () => {
    await killAll();
    await database?.drop();
  });

  const post = async (base: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('a consent revoked on one process: its access token is refused on the other at the very next request, and its refresh token too', async () => {
    const customer = { email: 'customer@example.com', password: 'customer-password-1' };
    expect((await post(a.url, '/api/v2/users', { user: { name: 'Customer', email: customer.email, role: 'end_user', password: customer.password } })).status).toBe(201);
    const client = await post(a.url, '/api/v2/oauth/clients', { name: 'Dashboard', company: 'Acme', client_type: 'public', scopes: 'read write', redirect_uris: [REDIRECT] });
    expect(client.status).toBe(201);
    const identifier = client.body.client_identifier as string;

    const tokens = await consentAndExchange(a.url, identifier, REDIRECT, customer);
    const me = (server: ServerHandle) => fetch(`${server.url}/api/v2/users/me.json`, { headers: { authorization: `Bearer ${tokens.access}` } }).then((r) => r.status);
    // both processes have served the token
    expect(await me(b)).toBe(200);
    expect(await me(a)).toBe(200);

    const customerAuth = basicHeader(customer.email, customer.password);
    const listed = await fetch(`${b.url}/api/v2/users/me/oauth/grants`, { headers: { authorization: customerAuth } });
    const { grants } = (await listed.json()) as { grants: { id: string; kind: string; client: { name: string } }[] };
    expect(grants.map((g) => [g.kind, g.client.name])).toEqual([['grant', 'Dashboard']]);

    const revoked = await fetch(`${a.url}/api/v2/users/me/oauth/grants/${grants[0].id}`, { method: 'DELETE', headers: { authorization: customerAuth } });
    expect(revoked.status).toBe(204);
    const next = await fetch(`${b.url}/api/v2/users/me.json`, { headers: { authorization: `Bearer ${tokens.access}` } });
    expect(next.status).toBe(401);
    expect(next.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await refresh(b.url, identifier, tokens.refresh)).toEqual({ status: 400, error: 'invalid_grant' });
    expect(await me(a)).toBe(401);
  });
});
