import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// The probe's hole: OAuthToken.client and OAuthClient.tokens carried no
// authorization, so any token holder could read, through their own token, the
// client's identifier and redirect URIs and other users' tokens and emails.
// Every field now applies the rule of the top-level query that returns its type
// (docs/api.md, "Scopes and roles"): clients admin + read; others' tokens admin + read; a token always
// shows its own scalar fields. (The full table is test/authorization.matrix.test.ts.)

const LEAK = `{ currentOAuthToken { id token scopes
  client { id clientIdentifier clientSecret redirectUris tokens { id token user { email role } } } } }`;
const LEAK_BY_ID = (id: bigint) => `{ oauthToken(id: "${id}") { id client { clientIdentifier redirectUris tokens { token user { email } } } } }`;

describe('nested fields are authorized like their top-level queries', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let victimsEmail: string;

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    const victim = await ctx.createUser(account, 'agent');
    victimsEmail = victim.email;
    await insertToken(ctx, victim);
  });
  afterAll(() => ctx.close());

  /** The answer shows nothing of the client, nor of any other token or user. */
  function expectNothingLeaked(body: string, own: { token: string }) {
    expect(body).not.toMatch(/clientIdentifier"\s*:\s*"/);
    expect(body).not.toContain('https://example.com/cb');
    expect(body).not.toContain(victimsEmail);
    // the only token prefix in the answer is the caller's own
    const prefixes = [...body.matchAll(/"token":"([^"]+)"/g)].map((m) => m[1]);
    expect(prefixes.every((p) => p === own.token.slice(0, 10))).toBe(true);
  }

  /** A caller presenting its own new token (of `who()`, with `scopes`), and any extra headers. */
  const withToken = (who: () => TestUser, scopes: string[], extra: () => Record<string, string> = () => ({})) => async () => {
    const own = await insertToken(ctx, who(), { scopes });
    return { headers: { authorization: `Bearer ${own.token}`, ...extra() }, own };
  };
  const callers: [string, () => Promise<{ headers: Record<string, string>; own: { token: string; id: bigint } }>][] = [
    ['an admin token with only write', withToken(() => admin, ['write'])],
    ['an admin token with only impersonate', withToken(() => admin, ['impersonate'])],
    ['an admin token with only tickets:read', withToken(() => admin, ['tickets:read'])],
    ['an admin impersonating an end user', withToken(() => admin, ['read', 'impersonate'], () => ({ 'x-on-behalf-of': endUser.email }))],
    ['an agent with a read token', withToken(() => agent, ['read'])],
    ['an end user with a read token', withToken(() => endUser, ['read'])],
  ];

  it.each(callers)('%s sees its own token, and FORBIDDEN instead of the client and its tokens', async (_who, caller) => {
    const { headers, own } = await caller();
    const res = await ctx.graphql(LEAK, {}, headers);
    const body = res.json();
    expect(body.data.currentOAuthToken).toMatchObject({ id: String(own.id), token: own.token.slice(0, 10), client: null });
    expect(body.errors).toEqual([expect.objectContaining({ path: ['currentOAuthToken', 'client'], extensions: { code: 'FORBIDDEN' } })]);
    expectNothingLeaked(res.body, own);
  });

  // by id: the impersonated end user's tokens are the end user's, so the admin's own token is
  // not found (null, no error); the others find their token and get FORBIDDEN at client
  it.each(callers.slice(3).map(([who, caller]) => [who, caller, who.includes('impersonating') ? 'not found' : 'forbidden client'] as const))(
    '%s reading its own token by id gets no client either',
    async (_who, caller, expected) => {
      const { headers, own } = await caller();
      const res = await ctx.graphql(LEAK_BY_ID(own.id), {}, headers);
      expectNothingLeaked(res.body, own);
      const forbiddenClient = {
        data: { oauthToken: { id: String(own.id), client: null } },
        errors: [expect.objectContaining({ path: ['oauthToken', 'client'], extensions: { code: 'FORBIDDEN' } })],
      };
      expect(res.json()).toEqual(expected === 'not found' ? { data: { oauthToken: null } } : forbiddenClient);
    },
  );

  it('an admin with read still sees the client and its tokens', async () => {
    const own = await insertToken(ctx, admin, { scopes: ['read'] });
    const res = await ctx.graphql(LEAK, {}, { authorization: `Bearer ${own.token}` });
    expect(res.json().errors).toBeUndefined();
    expect(res.json().data.currentOAuthToken.client.tokens).toEqual([expect.objectContaining({ token: own.token.slice(0, 10), user: { email: admin.email, role: 'ADMIN' } })]);
  });
});

describe('answers that carry a secret or a full token are not cached', () => {
  let ctx: TestContext;
  let admin: TestUser;
  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  it('create client, generate secret and create token say Cache-Control: no-store', async () => {
    const post = (url: string, payload?: object) =>
      ctx.inject({ method: 'POST', url, headers: { authorization: admin.basic, 'content-type': 'application/json' }, payload });
    const created = await post('/api/v2/oauth/clients.json', { name: 'c', scopes: 'read', redirect_uris: 'https://example.com/cb' });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    const secret = await post(`/api/v2/oauth/clients/${id}/client_secret.json`);
    const token = await post('/api/v2/oauth/tokens.json', { token: { client_id: id, scopes: ['read'] } });
    for (const res of [created, secret, token]) {
      expect(res.statusCode).toBeLessThan(300);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    const gql = await ctx.graphql(`mutation { generateOAuthClientSecret(id: "${id}") { clientSecret } }`, {}, { authorization: admin.basic });
    expect(gql.headers['cache-control']).toBe('no-store');
  });
});
