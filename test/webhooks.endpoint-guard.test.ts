import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../src/config';
import { addressGuard, blockedAddressReason } from '../src/domain/webhooks/endpoint-guard';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Webhooks" (the endpoint guard): in production (WEBHOOK_ALLOW_PRIVATE_ENDPOINTS
// false) an endpoint is https to a public address, checked when a webhook is saved;
// outside production a local receiver is fine.

jest.setTimeout(60_000);

const fields = (endpoint: string) => ({ name: 'Guarded', endpoint, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [] });

describe('the endpoint guard in production mode (private endpoints not allowed)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  beforeAll(async () => {
    ctx = await createTestApp({ webhookAllowPrivateEndpoints: false });
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  const create = (endpoint: string): Promise<LightMyRequestResponse> =>
    ctx.inject({ method: 'POST', url: '/api/v2/webhooks', headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload: { webhook: fields(endpoint) } });

  it.each([
    ['loopback', 'https://127.0.0.1/hook'],
    ['loopback, another spelling', 'https://0x7f.1/hook'],
    ['loopback as an integer', 'https://2130706433/hook'],
    ['private (RFC 1918)', 'https://10.0.0.1/hook'],
    ['private (RFC 1918)', 'https://172.16.5.4/hook'],
    ['private (RFC 1918)', 'https://192.168.1.10/hook'],
    ['the metadata service', 'https://169.254.169.254/latest/meta-data/'],
    ['CGNAT', 'https://100.64.0.1/hook'],
    ['unspecified', 'https://0.0.0.0/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['IPv6 unspecified', 'https://[::]/hook'],
    ['IPv6 unique local', 'https://[fc00::5]/hook'],
    ['AWS metadata over IPv6', 'https://[fd00:ec2::254]/latest/meta-data/'],
    ['IPv6 link-local', 'https://[fe80::1]/hook'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['IPv4-mapped metadata', 'https://[::ffff:a9fe:a9fe]/hook'],
    ['a name that resolves to loopback', 'https://localhost/hook'],
    ['plain http, even to a public address', 'http://93.184.215.14/hook'],
  ])('refuses %s: %s (422 naming the endpoint, nothing stored)', async (_what, endpoint) => {
    const res = await create(endpoint);
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual({ endpoint: [{ error: 'InvalidValue', description: expect.stringMatching(/^Endpoint: (must use https|must not point at a loopback, private, link-local or reserved address)/) }] });
    const [{ n }] = await ctx.db.sql<{ n: string }>('SELECT count(*)::text AS n FROM webhooks WHERE endpoint = $1', [endpoint]);
    expect(n).toBe('0');
  });

  it('says which address a name resolved to', async () => {
    const res = await create('https://localhost:8443/hook');
    expect(res.json().details.endpoint[0].description).toBe('Endpoint: must not point at a loopback, private, link-local or reserved address (localhost resolves to 127.0.0.1)');
  });

  it('accepts a public https endpoint (IPv4 and IPv6 literals: no DNS needed)', async () => {
    for (const endpoint of ['https://93.184.215.14/hook', 'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook']) {
      const res = await create(endpoint);
      expect([endpoint, res.statusCode, res.json().webhook?.endpoint]).toEqual([endpoint, 201, endpoint]);
    }
  });

  it('guards a change of the endpoint too (PUT and PATCH)', async () => {
    const hook = (await create('https://93.184.215.14/hook')).json().webhook;
    const patch = await ctx.inject({ method: 'PATCH', url: `/api/v2/webhooks/${hook.id}`, headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload: { endpoint: 'https://169.254.169.254/' } });
    expect([patch.statusCode, Object.keys(patch.json().details)]).toEqual([422, ['endpoint']]);
    const put = await ctx.inject({ method: 'PUT', url: `/api/v2/webhooks/${hook.id}`, headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload: { webhook: fields('https://[::1]/') } });
    expect(put.statusCode).toBe(422);
    const gql = await ctx.graphql('mutation($id: ID!) { updateWebhook(id: $id, input: { endpoint: "https://10.0.0.1/" }) { endpoint } }', { id: hook.id }, { authorization: admin.basic });
    expect(gql.json().errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { endpoint: [expect.objectContaining({ error: 'InvalidValue' })] } });
    expect((await ctx.inject({ method: 'GET', url: `/api/v2/webhooks/${hook.id}`, headers: { authorization: admin.basic } })).json().webhook.endpoint).toBe('https://93.184.215.14/hook');
  });
});

describe('outside production (private endpoints allowed, the default)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  it('accepts a local http receiver, and still refuses what is no http(s) URL or carries credentials', async () => {
    const post = (endpoint: string) =>
      ctx.inject({ method: 'POST', url: '/api/v2/webhooks', headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload: { webhook: fields(endpoint) } });
    const ok = await post('http://127.0.0.1:38421/receiver');
    expect([ok.statusCode, ok.json().webhook.endpoint]).toEqual([201, 'http://127.0.0.1:38421/receiver']);
    expect((await post('http://localhost:38421/receiver')).statusCode).toBe(201);
    expect((await post('file:///etc/passwd')).statusCode).toBe(422);
    expect((await post('http://user:secret@127.0.0.1/')).json().details.endpoint[0].description).toBe('Endpoint: must not contain credentials (user:password@)');
  });
});

describe('what the delivery checks again on the address it connects to', () => {
  const strict = { allowPrivate: false };
  it.each(['127.0.0.1', '10.1.2.3', '169.254.169.254', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:ffff:7f00:1', '64:ff9b::a00:1', 'fd00:ec2::254', 'fe80::1%eth0'])('refuses %s', (address) => {
    expect(blockedAddressReason(address, strict)).toEqual(expect.any(String));
  });
  it.each(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::ffff:93.184.215.14'])('allows %s', (address) => {
    expect(blockedAddressReason(address, strict)).toBeUndefined();
  });
  it('allows anything when private endpoints are allowed', () => {
    expect(blockedAddressReason('127.0.0.1', { allowPrivate: true })).toBeUndefined();
  });
  it('is also given as a check of one address, the shape a connection lookup calls', () => {
    expect([addressGuard(strict)('10.0.0.1'), addressGuard(strict)('93.184.215.14'), addressGuard({ allowPrivate: true })('10.0.0.1')]).toEqual([expect.any(String), undefined, undefined]);
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_ENDPOINTS', () => {
  const production = { NODE_ENV: 'production', HASH_KEY: 'k'.repeat(32), PUBLIC_URL: 'https://help.example.com' };
  it('is false by default in production, true otherwise; true in production is warned about', () => {
    expect(loadConfig(production).webhookAllowPrivateEndpoints).toBe(false);
    expect(loadConfig({ NODE_ENV: 'development', DATA_DIR: ':memory:' }).webhookAllowPrivateEndpoints).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test', DATA_DIR: ':memory:' }).webhookAllowPrivateEndpoints).toBe(true);
    const opened = loadConfig({ ...production, WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'true' });
    expect(opened.webhookAllowPrivateEndpoints).toBe(true);
    expect(opened.warnings.join('\n')).toContain('WEBHOOK_ALLOW_PRIVATE_ENDPOINTS=true in production');
    expect(loadConfig({ NODE_ENV: 'development', DATA_DIR: ':memory:', WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'false' }).webhookAllowPrivateEndpoints).toBe(false);
  });
  it('a bad value is a clear error naming the variable', () => {
    expect(() => loadConfig({ ...production, WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: 'sometimes' })).toThrow('Invalid configuration: WEBHOOK_ALLOW_PRIVATE_ENDPOINTS must be true or false, got "sometimes"');
  });
});
