import type { LightMyRequestResponse } from 'fastify';
import { kdfRuns } from '../src/domain/auth/passwords';
import { basicHeader, createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// Accounts have a subdomain; a request on {subdomain}.<the service's host> acts in
// that account only, and a Basic login costs exactly one password KDF whatever the
// data (before, one KDF ran per account holding the email: the time of a 401 told
// in how many accounts an email is held). Decisions (authenticator.ts, request-context.ts):
// - subdomain host: Basic looks up the email in that account only; a Bearer token
//   of another account is refused exactly like an unknown token;
// - unknown subdomain: authenticates nobody (401, same body, the dummy KDF runs);
// - plain host: Basic verifies against the active user holding the email in the
//   account with the lowest id, only; a Bearer token works as before.

const ME = '{ me { id email } }';

interface Attempt {
  res: LightMyRequestResponse;
  kdfs: number;
}

describe('account subdomains and one KDF per Basic attempt', () => {
  let ctx: TestContext;
  // accounts[0] < accounts[1] < accounts[2] by id
  const accounts: { id: bigint; subdomain: string }[] = [];
  // holders[n][k]: the user of the email held in n + 1 accounts, in accounts[k]
  const holders: TestUser[][] = [];

  const attempt = async (authorization: string, host?: string): Promise<Attempt> => {
    const before = kdfRuns();
    const res = await ctx.graphql(ME, {}, host ? { authorization, host } : { authorization });
    return { res, kdfs: kdfRuns() - before };
  };
  const expectUser = (a: Attempt, user: TestUser) => {
    expect({ status: a.res.statusCode, me: a.res.json().data?.me, kdfs: a.kdfs }).toEqual({
      status: 200,
      me: { id: String(user.id), email: user.email },
      kdfs: 1,
    });
  };
  let unauthenticated: string;
  const expectRefused = (a: Attempt) => {
    expect({ status: a.res.statusCode, body: a.res.body, challenge: a.res.headers['www-authenticate'], kdfs: a.kdfs }).toEqual({
      status: 401,
      body: unauthenticated,
      challenge: 'Basic realm="api"',
      kdfs: 1,
    });
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    const directory = ctx.app.services.accounts;
    for (const name of ['Acme', 'Globex', 'Initech']) {
      const account = await directory.create(`${name} ${process.pid}`, `${name.toLowerCase()}-${process.pid}`);
      accounts.push({ id: account.id, subdomain: account.subdomain });
    }
    expect(accounts[0].id < accounts[1].id && accounts[1].id < accounts[2].id).toBe(true);
    for (let n = 0; n < 3; n++) {
      const email = `held-in-${n + 1}@example.com`;
      holders.push([]);
      for (let k = 0; k <= n; k++) holders[n].push(await ctx.createUser(accounts[k].id, 'agent', { email, password: `password-of-account-${k}` }));
    }
    // the same dummy-hash (unknown email) answer every refusal must match
    unauthenticated = (await ctx.graphql(ME, {}, { authorization: basicHeader('nobody-at-all@example.com', 'x') })).body;
  });
  afterAll(() => ctx.close());

  describe.each([1, 2, 3])('an email held in %i account(s)', (count) => {
    const n = count - 1;

    it('plain host: a wrong password costs one KDF', async () => {
      expectRefused(await attempt(basicHeader(holders[n][0].email, 'wrong-password')));
    });

    it('plain host: the lowest account’s user logs in with one KDF; no other account’s password works there', async () => {
      expectUser(await attempt(holders[n][0].basic), holders[n][0]);
      for (const other of holders[n].slice(1)) expectRefused(await attempt(other.basic));
    });

    it('subdomain host: each account’s user logs in with one KDF, and only there', async () => {
      for (let k = 0; k <= n; k++) {
        const user = holders[n][k];
        expectUser(await attempt(user.basic, `${accounts[k].subdomain}.localhost`), user);
        expectRefused(await attempt(basicHeader(user.email, 'wrong-password'), `${accounts[k].subdomain}.localhost:3000`));
        // another account's password, on this account's host
        const elsewhere = holders[n][(k + 1) % (n + 1)];
        if (elsewhere !== user) expectRefused(await attempt(elsewhere.basic, `${accounts[k].subdomain}.localhost`));
      }
      // an account that does not hold the email: the dummy KDF, the same 401
      if (n < 2) expectRefused(await attempt(holders[n][0].basic, `${accounts[2].subdomain}.localhost`));
    });

    it('an unknown subdomain authenticates nobody, with one KDF and the same 401', async () => {
      expectRefused(await attempt(holders[n][0].basic, `no-such-account-${process.pid}.localhost`));
    });
  });

  it('a cached verification costs no KDF, per host', async () => {
    const user = holders[2][1];
    const host = `${accounts[1].subdomain}.localhost`;
    expect((await attempt(user.basic, host)).kdfs).toBeLessThanOrEqual(1);
    const again = await attempt(user.basic, host);
    expect({ status: again.res.statusCode, kdfs: again.kdfs }).toEqual({ status: 200, kdfs: 0 });
    // the same credentials on the plain host name another user: not the cached one
    expectRefused(await attempt(user.basic));
  });

  it('Bearer: works on the plain host and its account’s subdomain; another account’s subdomain refuses it exactly like an unknown token', async () => {
    const user = holders[2][1];
    const { token } = await insertToken(ctx, user);
    const bearer = `Bearer ${token}`;
    expect((await attempt(bearer)).res.statusCode).toBe(200);
    const own = await attempt(bearer, `${accounts[1].subdomain}.localhost`);
    expect({ status: own.res.statusCode, me: own.res.json().data.me, kdfs: own.kdfs }).toEqual({ status: 200, me: { id: String(user.id), email: user.email }, kdfs: 0 });

    const unknown = await attempt(`Bearer ${'x'.repeat(43)}`, `${accounts[0].subdomain}.localhost`);
    for (const host of [`${accounts[0].subdomain}.localhost`, `${accounts[2].subdomain}.localhost`, `no-such-account-${process.pid}.localhost`]) {
      const other = await attempt(bearer, host);
      expect({ status: other.res.statusCode, body: other.res.body, challenge: other.res.headers['www-authenticate'], kdfs: other.kdfs }).toEqual({
        status: 401,
        body: unknown.res.body,
        challenge: 'Bearer error="invalid_token"',
        kdfs: 0,
      });
    }
  });

  it('builds links on the subdomain host the request came on', async () => {
    const admin = await ctx.createUser(accounts[1].id, 'admin', { password: 'links-admin-password' });
    await insertToken(ctx, admin);
    await insertToken(ctx, admin);
    const res = await ctx.inject({
      method: 'GET',
      url: '/api/v2/oauth/tokens.json?per_page=1',
      headers: { authorization: admin.basic, host: `${accounts[1].subdomain}.localhost:3000` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().next_page).toBe(`http://${accounts[1].subdomain}.localhost:3000/api/v2/oauth/tokens.json?per_page=1&page=2`);
  });
});

describe('account subdomains with PUBLIC_URL set', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let subdomain: string;

  beforeAll(async () => {
    ctx = await createTestApp({ publicUrl: 'https://help.example.com' });
    const account = await ctx.app.services.accounts.create(`Umbrella ${process.pid}`);
    subdomain = account.subdomain;
    admin = await ctx.createUser(account.id, 'admin', { password: 'umbrella-admin-password' });
    await insertToken(ctx, admin);
    await insertToken(ctx, admin);
  });
  afterAll(() => ctx.close());

  const list = (host: string) =>
    ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens.json?per_page=1', headers: { authorization: admin.basic, host } });

  it('derives the subdomain from the name when none is given', () => {
    expect(subdomain).toBe(`umbrella-${process.pid}`);
  });

  it('acts in the account of {subdomain}.<PUBLIC_URL host> (any port), and builds its links from PUBLIC_URL with the subdomain', async () => {
    for (const host of [`${subdomain}.help.example.com`, `${subdomain.toUpperCase()}.Help.Example.com:8443`]) {
      const res = await list(host);
      expect(res.statusCode).toBe(200);
      expect(res.json().next_page).toBe(`https://${subdomain}.help.example.com/api/v2/oauth/tokens.json?per_page=1&page=2`);
    }
  });

  it('treats any other Host as the plain host, with links from PUBLIC_URL', async () => {
    for (const host of ['help.example.com', 'elsewhere.example.org', `${subdomain}.localhost`, `a.${subdomain}.help.example.com`]) {
      const res = await list(host);
      expect(res.statusCode).toBe(200);
      expect(res.json().next_page).toBe('https://help.example.com/api/v2/oauth/tokens.json?per_page=1&page=2');
    }
  });

  it('an unknown subdomain of PUBLIC_URL’s host authenticates nobody', async () => {
    const res = await list(`no-such-account-${process.pid}.help.example.com`);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: "Couldn't authenticate you" });
  });
});
