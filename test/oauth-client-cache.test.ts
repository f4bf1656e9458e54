import { ClientGrantCache } from '../src/domain/oauth-clients/client-grant-cache';
import type { OAuthClientRecord } from '../src/domain/oauth-clients/oauth-client.repository';
import { basicClientAuth, REDIRECT, RFC7636, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';

// docs/api.md, "Client authentication": the grant endpoints' client cache in one process (the
// same rules across processes: test/oauth-client-cache.processes.test.ts, on PostgreSQL).
// What it saves is counted in statements; what it must never do is answer with a client
// that changed.

jest.setTimeout(60_000);

let s: OAuthStack;
beforeAll(async () => {
  s = await startOAuthStack();
});
afterAll(() => s.close());

const counted = async <T>(send: () => Promise<T>): Promise<[T, number]> => {
  const before = s.ctx.db.statementCount();
  const result = await send();
  return [result, s.ctx.db.statementCount() - before];
};
const grant = (c: RegisteredClient, secret = c.secret!, scope = 'read') =>
  s.post('/oauth/tokens', { grant_type: 'client_credentials', scope }, { authorization: basicClientAuth(c.identifier, secret) });
const introspect = (c: RegisteredClient, token: string, secret = c.secret!) => s.post('/oauth/introspect', { token }, { authorization: basicClientAuth(c.identifier, secret) });
const gql = async (query: string) => {
  const res = await s.ctx.graphql(query, {}, { authorization: s.admin.basic });
  expect(res.json().errors).toBeUndefined();
  return res.json().data;
};

describe('the grant endpoints’ client cache', () => {
  it('the first grant looks the client up, the next ones are the grant alone (1); a wrong secret is never answered from the cache', async () => {
    const c = await s.register({ type: 'confidential' });
    const [first, cold] = await counted(() => grant(c));
    expect({ status: first.status, cold }).toEqual({ status: 200, cold: 3 }); // lookup, the secret's first use recorded, grant
    const [second, warm] = await counted(() => grant(c));
    expect({ status: second.status, warm }).toEqual({ status: 200, warm: 1 });
    const [active, introspection] = await counted(() => introspect(c, second.body.access_token));
    expect({ active: active.body.active, introspection }).toEqual({ active: true, introspection: 1 });
    const [wrong, looked] = await counted(() => grant(c, 'not-the-secret'));
    expect({ status: wrong.status, error: wrong.body.error, looked }).toEqual({ status: 401, error: 'invalid_client', looked: 1 });
  });

  it('a regenerated secret: the old one is refused on the next request (the statement finds the cached client stale, the lookup refuses it); the new one works', async () => {
    const c = await s.register({ type: 'confidential' });
    expect((await grant(c)).status).toBe(200);
    const token = (await grant(c)).body.access_token as string;
    const { generateOAuthClientSecret } = await gql(`mutation { generateOAuthClientSecret(id: "${c.id}") { clientSecret } }`);
    const [refused, statements] = await counted(() => grant(c));
    // the grant's statement (its check fails, nothing issued), then the lookup
    expect({ status: refused.status, error: refused.body.error, statements }).toEqual({ status: 401, error: 'invalid_client', statements: 2 });
    expect((await introspect(c, token)).status).toBe(401);
    const fresh = generateOAuthClientSecret.clientSecret as string;
    expect((await grant(c, fresh)).status).toBe(200);
    expect((await introspect(c, token, fresh)).body.active).toBe(true);
  });

  it('a narrowed client: the next grant is judged by the stored scopes; a deleted client is unknown at once, and nothing was issued for it', async () => {
    const c = await s.register({ type: 'confidential', scopes: 'read write' });
    expect((await grant(c, c.secret!, 'write')).body.scope).toBe('write');
    await gql(`mutation { updateOAuthClient(id: "${c.id}", input: { scopes: "read" }) { id } }`);
    expect((await grant(c, c.secret!, 'write')).body.error).toBe('invalid_scope');
    expect((await grant(c, c.secret!, 'read')).body.scope).toBe('read');
    const tokens = async () => (await s.ctx.db.sql<{ n: number }>('SELECT count(*)::int AS n FROM oauth_tokens WHERE client_id = $1', [c.id]))[0].n;
    await gql(`mutation { deleteOAuthClient(id: "${c.id}") }`);
    const before = await tokens();
    expect((await grant(c)).body.error).toBe('invalid_client');
    expect(await tokens()).toBe(before);
    expect((await s.ctx.db.sql<{ n: number }>('SELECT count(*)::int AS n FROM oauth_tokens WHERE client_id = $1 AND revoked_at IS NULL', [c.id]))[0].n).toBe(0);
  });

  it('refresh_token with a cached client rotates in one statement; after the client’s secret changed, the old secret rotates nothing', async () => {
    const c = await s.register({ type: 'confidential' });
    const code = (await s.authorize(c, { verifier: RFC7636.verifier })).get('code')!;
    const issued = await s.post('/oauth/tokens', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier }, { authorization: basicClientAuth(c.identifier, c.secret!) });
    expect(issued.status).toBe(200);
    const refresh = (token: string, secret = c.secret!) => s.post('/oauth/tokens', { grant_type: 'refresh_token', refresh_token: token }, { authorization: basicClientAuth(c.identifier, secret) });
    expect((await grant(c)).status).toBe(200); // the client is cached now
    const [rotated, statements] = await counted(() => refresh(issued.body.refresh_token));
    expect({ status: rotated.status, statements }).toEqual({ status: 200, statements: 1 });
    await gql(`mutation { generateOAuthClientSecret(id: "${c.id}") { id } }`);
    expect((await refresh(rotated.body.refresh_token)).body.error).toBe('invalid_client');
    // the refresh token was not spent by the refused request
    const rows = await s.ctx.db.sql<{ used: boolean }>('SELECT refresh_token_used_at IS NOT NULL AS used FROM oauth_tokens WHERE refresh_token_prefix = $1', [rotated.body.refresh_token.slice(0, 10)]);
    expect(rows).toEqual([{ used: false }]);
  });
});

describe('ClientGrantCache', () => {
  const client = { id: 7n, accountId: 1n, identifier: 'app', clientType: 'confidential', scopes: 'read' } as OAuthClientRecord;
  const secret = (id: bigint, hash: string, expiresAt: number | null = null) => ({ id, hash, stale: false, expiresAt });

  it('keeps an entry a minute, and matches only a live cached secret of that key', () => {
    let now = 1_000_000;
    const cache = new ClientGrantCache(() => now);
    cache.store('k', client, [secret(1n, 'aa'), secret(2n, 'bb', now + 5000)]);
    expect(cache.match('k', 'aa')?.check).toEqual({ clientId: 7n, clientType: 'confidential', scopes: 'read', secretId: 1n });
    expect(cache.match('k', 'bb')?.check.secretId).toBe(2n);
    expect(cache.match('k', 'cc')).toBeUndefined();
    expect(cache.match('other', 'aa')).toBeUndefined();
    now += 5001; // the previous secret's grace period ended
    expect(cache.match('k', 'bb')).toBeUndefined();
    expect(cache.match('k', 'aa')).toBeDefined();
    now += 54_999; // a minute since it was stored
    expect(cache.match('k', 'aa')).toBeDefined();
    now += 1;
    expect(cache.match('k', 'aa')).toBeUndefined();
  });

  it('forgets an entry on demand, and holds at most 2000 clients (the oldest go first)', () => {
    const cache = new ClientGrantCache(() => 0);
    for (let i = 0; i < 2001; i++) cache.store(`k${i}`, client, [secret(1n, 'aa')]);
    expect(cache.match('k0', 'aa')).toBeUndefined();
    expect(cache.match('k1', 'aa')).toBeDefined();
    cache.forget('k1');
    expect(cache.match('k1', 'aa')).toBeUndefined();
    expect(cache.match('k2000', 'aa')).toBeDefined();
  });
});
