import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';
import { REDIRECT, RFC7636 } from './helpers/oauth-server';
import { pagesBrowser, signInToConsent } from './helpers/authorize-pages';

// What one user or one client can mint is bounded (docs/api.md "The authorization
// request" and "The grant endpoint"): before, one end user ran 60 consent → code →
// token rounds in 0.9 s, each writing a grant, a code, a token pair and an audit
// record, and a confidential client ran client_credentials without any cap.
// Here the limits are lowered (OAUTH_USER_LIVE_GRANTS, OAUTH_CLIENT_LIVE_TOKENS).

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const USER_LIMIT = 2;
const CLIENT_LIMIT = 3;

describe('limits on live grants per user and live tokens per client', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let endUser: TestUser;
  let other: TestUser;
  let pub: string;

  const register = async (type: 'public' | 'confidential') => {
    const res = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: admin.basic },
      payload: { name: `App ${type}`, client_type: type, scopes: 'read write', redirect_uris: [REDIRECT] },
    });
    return { identifier: res.json().client_identifier as string, secret: res.json().client_secret as string, id: BigInt(res.json().id) };
  };
  const token = (params: Record<string, string>) =>
    ctx.inject({ method: 'POST', url: '/oauth/tokens', headers: FORM, payload: new URLSearchParams(params).toString() });

  beforeAll(async () => {
    ctx = await createTestApp({ limits: { oauthUserLiveGrants: USER_LIMIT, oauthClientLiveTokens: CLIENT_LIMIT } });
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    endUser = await ctx.createUser(account, 'end_user');
    other = await ctx.createUser(account, 'end_user');
    pub = (await register('public')).identifier;
  });
  afterAll(() => ctx.close());

  const authorizeUrl = `/oauth/authorizations/new?${new URLSearchParams({
    response_type: 'code', client_id: 'CLIENT', redirect_uri: REDIRECT, state: 's', code_challenge: RFC7636.challenge, code_challenge_method: 'S256',
  })}`;
  /**
   * consent and Allow: the redirect's parameters. A consent the user already gave for these
   * scopes is remembered (docs/api.md, "Remembered consent"): straight back, under the same limit.
   */
  const allow = async (user: TestUser, scope?: string) => {
    const browser = pagesBrowser(ctx);
    const consent = await signInToConsent(browser, authorizeUrl.replace('CLIENT', pub) + (scope ? `&scope=${encodeURIComponent(scope)}` : ''), user);
    if (consent.statusCode === 302) return new URL(consent.headers.location as string).searchParams;
    const res = await browser.post('/oauth/authorizations', { ...browser.hiddenFields(consent.body), decision: 'allow' });
    expect(res.statusCode).toBe(303);
    return new URL(res.headers.location as string).searchParams;
  };
  const exchange = (code: string) => token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: pub, code_verifier: RFC7636.verifier });
  const grantsOf = async (user: TestUser) => Number((await ctx.db.sql<{ n: string }>('SELECT count(*) AS n FROM oauth_grants WHERE user_id = $1', [String(user.id)]))[0].n);
  const tokenAudits = async () => Number((await ctx.db.sql<{ n: string }>("SELECT count(*) AS n FROM audit_logs WHERE source_type = 'oauth_token'"))[0].n);

  it('an end user holds at most OAUTH_USER_LIVE_GRANTS live grants: then Allow redirects with invalid_request and stores nothing', async () => {
    // 'read' first, then 'read write': two consents (a wider one is asked again), two grants
    const first = await exchange((await allow(endUser, 'read')).get('code')!);
    expect(first.statusCode).toBe(200);
    const pending = (await allow(endUser)).get('code')!; // a code not redeemed yet counts too
    expect(pending).toMatch(/^[\w-]{43}$/);
    const [grants, audits] = [await grantsOf(endUser), await tokenAudits()];

    // remembered or not, beyond the limit nothing is issued
    const refused = await allow(endUser);
    expect({ error: refused.get('error'), code: refused.get('code'), state: refused.get('state') }).toEqual({ error: 'invalid_request', code: null, state: 's' });
    expect(refused.get('error_description')).toContain(`${USER_LIMIT} live authorizations`);
    expect([await grantsOf(endUser), await tokenAudits()]).toEqual([grants, audits]);

    // another user of the same app is not affected
    expect((await allow(other)).get('code')).toMatch(/^[\w-]{43}$/);
    // revoking the first grant's refresh token frees its place
    const revoked = await ctx.inject({
      method: 'POST', url: '/oauth/revoke', headers: FORM, payload: new URLSearchParams({ token: first.json().refresh_token, client_id: pub }).toString(),
    });
    expect(revoked.statusCode).toBe(200);
    expect((await allow(endUser)).get('code')).toMatch(/^[\w-]{43}$/);
    // the pending code is still redeemable, and the exchange needs no new place
    expect((await exchange(pending)).statusCode).toBe(200);
  });

  it('a client holds at most OAUTH_CLIENT_LIVE_TOKENS live client_credentials tokens: then 429 invalid_request with Retry-After, nothing stored', async () => {
    const conf = await register('confidential');
    const credentials = { grant_type: 'client_credentials', client_id: conf.identifier, client_secret: conf.secret };
    for (let i = 0; i < CLIENT_LIMIT; i++) expect((await token(credentials)).statusCode).toBe(200);
    const audits = await tokenAudits();

    const refused = await token(credentials);
    expect({ status: refused.statusCode, error: refused.json().error }).toEqual({ status: 429, error: 'invalid_request' });
    expect(refused.json().error_description).toContain(`${CLIENT_LIMIT} live client_credentials tokens`);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(1800 - 5);
    expect(retryAfter).toBeLessThanOrEqual(1800 + 15 * 60);
    expect(refused.headers['cache-control']).toBe('no-store');
    const stored = await ctx.db.sql<{ n: string }>('SELECT count(*) AS n FROM oauth_tokens WHERE client_id = $1', [String(conf.id)]);
    expect(Number(stored[0].n)).toBe(CLIENT_LIMIT);
    expect(await tokenAudits()).toBe(audits);

    // another client is not affected
    const second = await register('confidential');
    expect((await token({ grant_type: 'client_credentials', client_id: second.identifier, client_secret: second.secret })).statusCode).toBe(200);
  });
});
