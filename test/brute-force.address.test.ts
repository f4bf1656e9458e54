import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { loginAddressKey, loginEmailKeyPrefix } from '../src/domain/auth/login-keys';
import { MAX_CONCURRENT_KDF, MAX_WAITING_KDF } from '../src/domain/auth/kdf-queue';
import { basicHeader, createTestApp, insertToken, TEST_HASH_KEY, type TestContext, type TestUser } from './helpers/test-app';

// Beside the per-email throttle (docs/api.md, "Authentication"), failed Basic attempts are counted per
// client address (request.ip; an IPv6 address by its /64), in the database: past
// the limit, every Basic attempt from that address answers 429 with Retry-After,
// whatever the email, the right password included. And the password KDF's waiting
// queue is bounded: a verification beyond it answers 503 with Retry-After at once,
// and is not counted as a failure anywhere.

const ME = '{ me { id } }';
const WINDOW = 300;

function graphqlFrom(ctx: TestContext, address: string, authorization: string): Promise<LightMyRequestResponse> {
  return ctx.inject({
    method: 'POST',
    url: '/graphql',
    remoteAddress: address,
    headers: { 'content-type': 'application/json', authorization },
    payload: { query: ME },
  });
}

function restFrom(ctx: TestContext, address: string, authorization: string): Promise<LightMyRequestResponse> {
  return ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', remoteAddress: address, headers: { authorization } });
}

async function rows(ctx: TestContext, key: string): Promise<number> {
  const [row] = await ctx.db.sql<{ n: string | number }>('SELECT count(*) AS n FROM rate_window_hits WHERE key = $1', [key]);
  return Number(row.n);
}
const addressRows = (ctx: TestContext, address: string) => rows(ctx, loginAddressKey(TEST_HASH_KEY, address));
const emailRows = async (ctx: TestContext, email: string) => {
  // the email's windows in every account (a window per (account, email))
  const [row] = await ctx.db.sql<{ n: string | number }>("SELECT count(*) AS n FROM rate_window_hits WHERE key LIKE $1 || '%'", [loginEmailKeyPrefix(TEST_HASH_KEY, email.toLowerCase())]);
  return Number(row.n);
};

const stranger = () => `nobody-${randomUUID()}@example.com`;

async function failFrom(ctx: TestContext, address: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) expect((await graphqlFrom(ctx, address, basicHeader(stranger(), 'wrong-password'))).statusCode).toBe(401);
}

function expectThrottled(res: LightMyRequestResponse): number {
  expect(res.statusCode).toBe(429);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW);
  return retryAfter;
}

describe('per-address throttle on failed Basic logins', () => {
  const LIMIT = 5;
  let ctx: TestContext;
  let user: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp({ limits: { loginAddressFailures: LIMIT } });
    user = await ctx.createUser(await ctx.createAccount(), 'admin', { password: 'the-right-password' });
  });
  afterAll(() => ctx.close());

  it('answers every Basic attempt from an address past its limit with 429 and Retry-After, the right password of an untouched email included', async () => {
    await failFrom(ctx, '10.0.0.1', LIMIT);
    expect(await addressRows(ctx, '10.0.0.1')).toBe(LIMIT);

    const gql = await graphqlFrom(ctx, '10.0.0.1', user.basic);
    const retryAfter = expectThrottled(gql);
    expect(gql.json().errors[0]).toMatchObject({ message: 'Too many failed login attempts; try again later', extensions: { code: 'RATE_LIMITED', retryAfter } });
    const rest = await restFrom(ctx, '10.0.0.1', user.basic);
    expectThrottled(rest);
    expect(rest.json()).toEqual({ error: 'TooManyRequests', description: 'Too many failed login attempts; try again later' });

    // a refused attempt is counted nowhere: not for the address, not for the email
    expect(await addressRows(ctx, '10.0.0.1')).toBe(LIMIT);
    expect(await emailRows(ctx, user.email)).toBe(0);
  });

  it('leaves other addresses, and Bearer tokens from the same address, unaffected', async () => {
    const other = await graphqlFrom(ctx, '10.0.0.2', user.basic);
    expect(other.statusCode).toBe(200);
    expect(other.json().data.me.id).toBe(String(user.id));
    const { token } = await insertToken(ctx, user);
    expect((await graphqlFrom(ctx, '10.0.0.1', `Bearer ${token}`)).statusCode).toBe(200);
  });

  it('refuses an address one below the limit only at its next failure: the limit-th failure is still answered 401', async () => {
    await failFrom(ctx, '10.0.0.3', LIMIT - 1);
    const last = await graphqlFrom(ctx, '10.0.0.3', basicHeader(stranger(), 'wrong'));
    expect(last.statusCode).toBe(401);
    expectThrottled(await graphqlFrom(ctx, '10.0.0.3', basicHeader(stranger(), 'wrong')));
    expect(await addressRows(ctx, '10.0.0.3')).toBe(LIMIT);
  });

  it('keeps the address count through a success (a success clears its email only), and counts an IPv6 /64 as one client', async () => {
    await failFrom(ctx, '2001:db8:1:2::1', 2);
    await failFrom(ctx, '2001:db8:1:2:ffff:ffff:ffff:ffff', 2);
    expect(await addressRows(ctx, '2001:db8:1:2::77')).toBe(4);

    const ok = await graphqlFrom(ctx, '2001:db8:1:2::5', user.basic);
    expect(ok.statusCode).toBe(200);
    expect(await addressRows(ctx, '2001:db8:1:2::5')).toBe(4);

    await failFrom(ctx, '2001:0db8:0001:0002:0:0:0:9', 1);
    expectThrottled(await graphqlFrom(ctx, '2001:db8:1:2:abcd::1', user.basic));
    // the next /64 is another client
    expect((await graphqlFrom(ctx, '2001:db8:1:3::1', user.basic)).statusCode).toBe(200);
  });

  it('counts an IPv4-mapped IPv6 address as the IPv4 address', async () => {
    await failFrom(ctx, '::ffff:10.0.0.9', 3);
    await failFrom(ctx, '10.0.0.9', 2);
    expect(await addressRows(ctx, '10.0.0.9')).toBe(5);
    expectThrottled(await graphqlFrom(ctx, '::ffff:10.0.0.9', user.basic));
  });
});

describe('the password KDF queue is bounded (passwords.ts)', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestApp({ limits: { loginAddressFailures: 1000 } });
  });
  afterAll(() => ctx.close());

  it('answers verifications beyond the queue 503 with Retry-After on both APIs, at once, and counts none of them', async () => {
    const total = MAX_CONCURRENT_KDF + MAX_WAITING_KDF + 20;
    const emails = Array.from({ length: total }, stranger);
    const started = Date.now();
    const replies = await Promise.all(
      emails.map(async (email, i) => {
        const res = i % 2 ? await restFrom(ctx, '10.9.9.9', basicHeader(email, 'guess')) : await graphqlFrom(ctx, '10.9.9.9', basicHeader(email, 'guess'));
        return { email, api: i % 2 ? 'rest' : 'graphql', res, ms: Date.now() - started };
      }),
    );
    const statuses = replies.map((r) => r.res.statusCode);
    expect([...new Set(statuses)].sort()).toEqual([401, 503]);
    const refused = replies.filter((r) => r.res.statusCode === 503);
    const answered = replies.filter((r) => r.res.statusCode === 401);
    for (const r of refused) {
      expect(r.res.headers['retry-after']).toBe('1');
      if (r.api === 'rest') expect(r.res.json()).toEqual({ error: 'ServiceUnavailable', description: expect.any(String) });
      else expect(r.res.json().errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    }
    // refused at once, not after waiting for the queue to drain
    expect(Math.max(...refused.map((r) => r.ms))).toBeLessThan(Math.max(...answered.map((r) => r.ms)));
    // a 503 is no failure: only the answered attempts are counted
    expect(await addressRows(ctx, '10.9.9.9')).toBe(answered.length);
    for (const r of refused.slice(0, 5)) expect(await emailRows(ctx, r.email)).toBe(0);
  });
});
