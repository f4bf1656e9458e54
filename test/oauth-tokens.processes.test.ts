import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, startServer, type ServerHandle } from './helpers/processes';

// Revocation is immediate and global: real processes, real HTTP, one PostgreSQL.
describeOnPostgres('token revocation across server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let a: ServerHandle;
  let b: ServerHandle;
  const env = () => ({ DATABASE_URL: database.url, ADMIN_PASSWORD: 'admin-password-1', HASH_KEY: 'shared-hash-key-for-both-processes-0123', LOG_LEVEL: 'info' });
  const admin = `Basic ${Buffer.from('admin@example.com:admin-password-1').toString('base64')}`;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    a = await startServer(env());
    b = await startServer(env());
  }, 180_000);
  afterAll(async () => {
    await killAll();
    await database.drop();
  });

  it('a token revoked on one process fails on the other on its very next request, and after a restart', async () => {
    const post = (url: string, body: unknown) =>
      fetch(`${a.url}${url}`, { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const client = (await (await post('/api/v2/oauth/clients', { name: 'x', scopes: 'read write', redirect_uris: 'https://x.example/cb' })).json()) as { id: number };
    const created = await post('/api/v2/oauth/tokens', { token: { client_id: client.id, scopes: ['read', 'write'] } });
    expect(created.status).toBe(201);
    const token = ((await created.json()) as { token: { token: string } }).token.token;
    const bearer = { authorization: `Bearer ${token}` };

    // warm both processes with the token
    expect((await fetch(`${b.url}/api/v2/oauth/tokens/current.json`, { headers: bearer })).status).toBe(200);
    expect((await fetch(`${a.url}/api/v2/oauth/tokens/current.json`, { headers: bearer })).status).toBe(200);

    expect((await fetch(`${a.url}/api/v2/oauth/tokens/current.json`, { method: 'DELETE', headers: bearer })).status).toBe(204);
    const next = await fetch(`${b.url}/api/v2/oauth/tokens/current.json`, { headers: bearer });
    expect(next.status).toBe(401);
    expect(next.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');

    await b.stop();
    b = await startServer(env());
    expect((await fetch(`${b.url}/api/v2/oauth/tokens/current.json`, { headers: bearer })).status).toBe(401);
  }, 120_000);
});
