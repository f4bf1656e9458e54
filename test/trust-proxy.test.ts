import { basicHeader, createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// TRUST_PROXY: behind a reverse proxy every client has the proxy's address, so the
// per-address login limit became one limit for everybody and the audit log's
// ip_address was always the proxy. With the proxy's address (or CIDR) in
// TRUST_PROXY, the client address is the one it forwards in X-Forwarded-For; from
// any other peer X-Forwarded-For is ignored (a client cannot choose its address).

const ME = '{ me { id } }';
const PROXY = '10.0.0.7';
const ADDRESS_LIMIT = 3;

describe('behind a trusted reverse proxy (TRUST_PROXY)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let n = 0;

  /** A wrong Basic login for a fresh email (so that only the address's limit can refuse it), from `peer`. */
  const wrongLogin = (peer: string, forwardedFor?: string) =>
    ctx.inject({
      method: 'POST',
      url: '/graphql',
      remoteAddress: peer,
      headers: {
        'content-type': 'application/json',
        authorization: basicHeader(`nobody-${++n}@example.com`, 'wrong-password'),
        ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
      },
      payload: { query: ME },
    });

  /** Creates a group as the admin from `peer`; the ip_address of its audit record, read through the API. */
  const auditedAddress = async (peer: string, forwardedFor: string): Promise<string | null> => {
    const created = await ctx.inject({
      method: 'POST',
      url: '/api/v2/groups.json',
      remoteAddress: peer,
      headers: { authorization: admin.basic, 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      payload: { group: { name: `group ${++n}` } },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().group.id as number;
    const logs = await ctx.inject({ method: 'GET', url: '/api/v2/audit_logs.json', headers: { authorization: admin.basic } });
    expect(logs.statusCode).toBe(200);
    const record = (logs.json().audit_logs as { source_type: string; source_id: number; ip_address: string | null }[]).find(
      (r) => r.source_type === 'group' && r.source_id === id,
    );
    expect(record).toBeDefined();
    return record!.ip_address;
  };

  beforeAll(async () => {
    ctx = await createTestApp({ trustProxy: [PROXY, '192.0.2.0/24'], limits: { loginAddressFailures: ADDRESS_LIMIT } });
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  it('limits failed logins per forwarded client, not per proxy', async () => {
    for (let i = 0; i < ADDRESS_LIMIT; i++) expect((await wrongLogin(PROXY, '203.0.113.5')).statusCode).toBe(401);
    expect((await wrongLogin(PROXY, '203.0.113.5')).statusCode).toBe(429);
    // another client behind the same proxy, and behind a proxy of the trusted range, is unaffected
    expect((await wrongLogin(PROXY, '203.0.113.6')).statusCode).toBe(401);
    expect((await wrongLogin('192.0.2.44', '198.51.100.20')).statusCode).toBe(401);
    // the client that was throttled stays throttled through another trusted proxy
    expect((await wrongLogin('192.0.2.44', '203.0.113.5')).statusCode).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: it cannot escape its limit', async () => {
    const peer = '198.51.100.77';
    for (let i = 0; i < ADDRESS_LIMIT; i++) expect((await wrongLogin(peer, `203.0.113.${100 + i}`)).statusCode).toBe(401);
    expect((await wrongLogin(peer, '203.0.113.200')).statusCode).toBe(429);
    expect((await wrongLogin(peer)).statusCode).toBe(429);
  });

  it("records the forwarded client's address in the audit log, and the peer's when the peer is not trusted", async () => {
    expect(await auditedAddress(PROXY, '203.0.113.9')).toBe('203.0.113.9');
    // a chain: the proxy appends the address it saw; the client's own claim is not believed
    expect(await auditedAddress(PROXY, '6.6.6.6, 203.0.113.10')).toBe('203.0.113.10');
    expect(await auditedAddress('198.51.100.78', '203.0.113.11')).toBe('198.51.100.78');
  });
});

describe('without TRUST_PROXY (the default)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestApp({ limits: { loginAddressFailures: ADDRESS_LIMIT } });
  });
  afterAll(() => ctx.close());

  it('ignores X-Forwarded-For from anyone', async () => {
    const attempt = (i: number) =>
      ctx.inject({
        method: 'POST',
        url: '/graphql',
        remoteAddress: PROXY,
        headers: { 'content-type': 'application/json', authorization: basicHeader(`nobody-else-${i}@example.com`, 'wrong'), 'x-forwarded-for': `203.0.113.${i}` },
        payload: { query: ME },
      });
    for (let i = 0; i < ADDRESS_LIMIT; i++) expect((await attempt(i)).statusCode).toBe(401);
    expect((await attempt(99)).statusCode).toBe(429);
  });
});
