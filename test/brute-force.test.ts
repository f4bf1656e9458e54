import { loginEmailKeyPrefix } from '../src/domain/auth/login-keys';
import { createTestApp, basicHeader, insertToken, TEST_HASH_KEY, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Authentication": after 10 failed Basic attempts for one email within the window,
// further Basic attempts for that email get 429 with Retry-After until the window
// passes, even with the right password. The count lives in the database.

const ME = '{ me { id } }';
const WINDOW = 300;

async function failTimes(ctx: TestContext, email: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const res = await ctx.graphql(ME, {}, { authorization: basicHeader(email, `wrong-password-${i}`) });
    expect(res.statusCode).toBe(401);
  }
}

function expectThrottled(res: Awaited<ReturnType<TestContext['graphql']>>, window: number): number {
  expect(res.statusCode).toBe(429);
  const retryAfter = res.headers['retry-after'];
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(window);
  const body = res.json();
  expect(body.data ?? null).toBeNull();
  expect(body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfter: Number(retryAfter) });
  return Number(retryAfter);
}

/** The email's failures as stored: hits of its windows (rate_window_take), keyed by an HMAC of the lower-cased email and the account. */
async function failureRows(ctx: TestContext, email: string): Promise<number> {
  const rows = await ctx.db.sql<{ n: string | number }>("SELECT count(*) AS n FROM rate_window_hits WHERE key LIKE $1 || '%'", [loginEmailKeyPrefix(TEST_HASH_KEY, email.toLowerCase())]);
  return Number(rows[0].n);
}

describe('brute-force throttle on Basic auth (docs/api.md, "Authentication")', () => {
  let ctx: TestContext;
  let account: bigint;
  let victim: TestUser;
  let bystander: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
    account = await ctx.createAccount();
    // one password for every user: the hash is computed once
    victim = await ctx.createUser(account, 'agent', { password: 'the-right-password' });
    bystander = await ctx.createUser(account, 'agent', { password: 'the-right-password' });
  });
  afterAll(() => ctx.close());

  it('answers the 11th attempt with 429 and Retry-After, even with the right password', async () => {
    // the count is per email, whatever its letter case
    await failTimes(ctx, victim.email, 5);
    await failTimes(ctx, victim.email.toUpperCase(), 5);
    expect(await failureRows(ctx, victim.email)).toBe(10);

    const res = await ctx.graphql(ME, {}, { authorization: victim.basic });
    expectThrottled(res, WINDOW);
    // a refused attempt is not a new failure that would push the window further
    expect(await failureRows(ctx, victim.email)).toBe(10);
  });

  it('throttles an unknown email the same way', async () => {
    const ghost = 'nobody-here@example.com';
    await failTimes(ctx, ghost, 10);
    const res = await ctx.graphql(ME, {}, { authorization: basicHeader(ghost, 'any-password') });
    expectThrottled(res, WINDOW);
    expect(res.json().errors[0].message).toBe(
      (await ctx.graphql(ME, {}, { authorization: victim.basic })).json().errors[0].message,
    );
  });

  it('leaves a different email unaffected', async () => {
    const res = await ctx.graphql(ME, {}, { authorization: bystander.basic });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.me.id).toBe(String(bystander.id));
    const wrong = await ctx.graphql(ME, {}, { authorization: basicHeader(bystander.email, 'not-it') });
    expect(wrong.statusCode).toBe(401);
  });

  it('throttles Basic only: a token of the same user still works', async () => {
    const { token } = await insertToken(ctx, victim);
    const basic = await ctx.graphql(ME, {}, { authorization: victim.basic });
    expect(basic.statusCode).toBe(429);
    const bearer = await ctx.graphql(ME, {}, { authorization: `Bearer ${token}` });
    expect(bearer.statusCode).toBe(200);
    expect(bearer.json().data.me.id).toBe(String(victim.id));
  });

  it('clears the count on a successful login before the threshold', async () => {
    const user = await ctx.createUser(account, 'end_user', { password: 'the-right-password' });
    await failTimes(ctx, user.email, 9);
    expect(await failureRows(ctx, user.email)).toBe(9);

    const ok = await ctx.graphql(ME, {}, { authorization: user.basic });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.me.id).toBe(String(user.id));
    expect(await failureRows(ctx, user.email)).toBe(0);

    // Had the 9 stayed, one more failure would make 10 and lock the right password out.
    await failTimes(ctx, user.email, 1);
    const again = await ctx.graphql(ME, {}, { authorization: user.basic });
    expect(again.statusCode).toBe(200);
  });
});

describe('brute-force throttle: the window passes', () => {
  // Wide enough for ten KDF verifications one after another (at most cores − 1 run at
  // once, passwords.ts): 2–6 s on a loaded 2-core CI machine.
  const window = 15;
  let ctx: TestContext;
  let user: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp({ limits: { loginWindowSeconds: window } });
    user = await ctx.createUser(await ctx.createAccount(), 'agent', { password: 'the-right-password' });
  });
  afterAll(() => ctx.close());

  it('lets the right password in again once Retry-After has elapsed', async () => {
    // at once, so that the ten scrypt verifications start together and fit inside the window
    const failures = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ctx.graphql(ME, {}, { authorization: basicHeader(user.email, `wrong-${i}`) })),
    );
    expect(failures.map((r) => r.statusCode)).toEqual(Array(10).fill(401));
    const throttled = await ctx.graphql(ME, {}, { authorization: user.basic });
    const retryAfter = expectThrottled(throttled, window);

    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 250));
    const res = await ctx.graphql(ME, {}, { authorization: user.basic });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.me.id).toBe(String(user.id));
  });
});
