import { basicHeader, createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// The Basic throttle's failures and their reset belong to (account, email): a guess
// counts against the account whose user it names (the subdomain's account, or on the
// plain host the account with the lowest id holding the email), and only a success
// in that account clears it. Before, the window was the email's alone: an admin of
// another account made a twin with the victim's email and a known password, and
// signing in as the twin every 9 guesses reset the victim's count (27 guesses, never
// a 429); and on the plain host, guesses at another account's holder of the email
// spent the victim's failures.

const ME = '{ me { id } }';

describe('brute-force throttle per (account, email)', () => {
  let ctx: TestContext;
  let hostA: string;
  let hostB: string;
  let victim: TestUser;
  let twin: TestUser;

  const login = (authorization: string, host?: string) => ctx.graphql(ME, {}, host ? { authorization, host } : { authorization });
  const guess = async (email: string, host: string | undefined, i: number) => (await login(basicHeader(email, `wrong-guess-${i}`), host)).statusCode;

  beforeAll(async () => {
    ctx = await createTestApp();
    const accounts = ctx.app.services.accounts;
    // A is older (lower id) than B: the plain host names A's holder of a shared email
    const a = await accounts.create(`Victim Co ${process.pid}`, `victim-${process.pid}`);
    const b = await accounts.create(`Twin Co ${process.pid}`, `twin-${process.pid}`);
    hostA = `${a.subdomain}.localhost`;
    hostB = `${b.subdomain}.localhost`;
    victim = await ctx.createUser(a.id, 'agent', { email: `victim-${process.pid}@example.com`, password: 'victims-secret-password' });
    // what an admin of B can do: a user of B with the victim's email and a password they know
    twin = await ctx.createUser(b.id, 'end_user', { email: victim.email, password: 'attackers-own-password' });
  });
  afterAll(() => ctx.close());

  it("does not let a twin in another account reset the victim's count (429 on the 11th guess, not 27 guesses)", async () => {
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 9; i++) statuses.push(await guess(victim.email, hostA, round * 9 + i));
      // the twin signs in on its own account's host: a success of account B
      expect((await login(twin.basic, hostB)).statusCode).toBe(200);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(401), ...Array<number>(17).fill(429)]);
    // even the right password, on either host that names the victim
    expect((await login(victim.basic, hostA)).statusCode).toBe(429);
    expect((await login(victim.basic)).statusCode).toBe(429);
    // the twin's own account is not throttled by guesses made on another account
    expect((await login(twin.basic, hostB)).statusCode).toBe(200);
  });
});

describe('brute-force throttle on the plain host names one account', () => {
  let ctx: TestContext;
  let hostA: string;
  let hostB: string;
  let older: TestUser;
  let newer: TestUser;

  const login = (authorization: string, host?: string) => ctx.graphql(ME, {}, host ? { authorization, host } : { authorization });

  beforeAll(async () => {
    ctx = await createTestApp();
    const accounts = ctx.app.services.accounts;
    const a = await accounts.create(`Older Co ${process.pid}`, `older-${process.pid}`);
    const b = await accounts.create(`Newer Co ${process.pid}`, `newer-${process.pid}`);
    hostA = `${a.subdomain}.localhost`;
    hostB = `${b.subdomain}.localhost`;
    const email = `shared-${process.pid}@example.com`;
    older = await ctx.createUser(a.id, 'agent', { email, password: 'older-accounts-password' });
    newer = await ctx.createUser(b.id, 'agent', { email, password: 'newer-accounts-password' });
  });
  afterAll(() => ctx.close());

  it("counts plain-host guesses against the older account's user only, not against the same email in another account", async () => {
    for (let i = 0; i < 10; i++) {
      expect((await login(basicHeader(older.email, `wrong-guess-${i}`))).statusCode).toBe(401);
    }
    // the plain host's user (account A) is throttled, on the plain host and on A's subdomain
    expect((await login(older.basic)).statusCode).toBe(429);
    expect((await login(older.basic, hostA)).statusCode).toBe(429);
    // the same email in account B has spent nothing
    expect((await login(newer.basic, hostB)).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) {
      expect((await login(basicHeader(newer.email, `wrong-guess-${i}`), hostB)).statusCode).toBe(401);
    }
    expect((await login(newer.basic, hostB)).statusCode).toBe(429);
  });
});
