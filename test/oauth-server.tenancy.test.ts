import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';
import { REDIRECT, RFC7636 } from './helpers/oauth-server';

// On an account's host ({subdomain}.localhost here), the authorization server
// knows that account's clients only (docs/api.md "Accounts and hosts"). Before,
// acme's host showed "Sign in to continue to <globex's app>" and redirected
// errors to globex's registered redirect URI with iss naming acme's host: an
// open redirect and a branded phishing page on every tenant's host. A client of
// another account must answer exactly as an unknown client (same status, same body).

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('the OAuth server on an account host knows that account’s clients only', () => {
  let ctx: TestContext;
  let acmeHost: string;
  let globexHost: string;
  let globexAdmin: TestUser;
  let pub: { identifier: string };
  let conf: { identifier: string; secret: string };

  const registerIn = async (admin: TestUser, type: 'public' | 'confidential') => {
    const res = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: admin.basic },
      payload: { name: 'Globex Payroll', client_type: type, scopes: 'read write', redirect_uris: [REDIRECT] },
    });
    expect(res.statusCode).toBe(201);
    return { identifier: res.json().client_identifier as string, secret: res.json().client_secret as string };
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    const accounts = ctx.app.services.accounts;
    const acme = await accounts.create(`Acme ${process.pid}`, `acme-${process.pid}`);
    const globex = await accounts.create(`Globex ${process.pid}`, `globex-${process.pid}`);
    acmeHost = `${acme.subdomain}.localhost`;
    globexHost = `${globex.subdomain}.localhost`;
    globexAdmin = await ctx.createUser(globex.id, 'admin');
    pub = await registerIn(globexAdmin, 'public');
    conf = await registerIn(globexAdmin, 'confidential');
  });
  afterAll(() => ctx.close());

  const authorizeQuery = (clientId: string, extra: Record<string, string> = {}) =>
    new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 'st', code_challenge: RFC7636.challenge, code_challenge_method: 'S256', ...extra,
    }).toString();
  const page = (host: string, clientId: string, extra: Record<string, string> = {}) =>
    ctx.inject({ method: 'GET', url: `/oauth/authorizations/new?${authorizeQuery(clientId, extra)}`, headers: { host } });
  const answer = (res: LightMyRequestResponse) => ({ status: res.statusCode, location: res.headers.location, body: res.body });
  const UNKNOWN = 'u'.repeat(40);

  it('the authorization page: another account’s client is an unknown client, never a sign-in page', async () => {
    const unknown = answer(await page(acmeHost, UNKNOWN));
    expect(unknown.status).toBe(400);
    const foreign = answer(await page(acmeHost, pub.identifier));
    expect(foreign).toEqual(unknown);
    expect(foreign.body).not.toContain('Globex Payroll');
    // on its own host and on the plain host it is shown as before
    for (const host of [globexHost, 'localhost']) {
      const own = await page(host, pub.identifier);
      expect({ status: own.statusCode, named: own.body.includes('Globex Payroll') }).toEqual({ status: 200, named: true });
    }
  });

  it('an error after the redirect URI check is the unknown-client page on another account’s host, never a redirect', async () => {
    const unknown = answer(await page(acmeHost, UNKNOWN, { response_type: 'x' }));
    const foreign = answer(await page(acmeHost, pub.identifier, { response_type: 'x' }));
    expect(foreign).toEqual(unknown);
    expect(foreign.location).toBeUndefined();
    // on globex's own host the same request redirects, with globex's host as iss
    const own = await page(globexHost, pub.identifier, { response_type: 'x' });
    expect(own.statusCode).toBe(302);
    expect(new URL(own.headers.location as string).searchParams.get('iss')).toBe(`http://${globexHost}`);
  });

  it('the login and consent forms: another account’s client is an unknown client', async () => {
    for (const url of ['/oauth/authorizations/login', '/oauth/authorizations']) {
      const post = (clientId: string) =>
        ctx.inject({ method: 'POST', url, headers: { ...FORM, host: acmeHost }, payload: `${authorizeQuery(clientId)}&email=a%40b.c&password=x&decision=allow` });
      expect(answer(await post(pub.identifier))).toEqual(answer(await post(UNKNOWN)));
    }
  });

  const protocol = (path: string, host: string, params: Record<string, string>) =>
    ctx.inject({ method: 'POST', url: path, headers: { ...FORM, host }, payload: new URLSearchParams(params).toString() });
  const json = (res: LightMyRequestResponse) => ({ status: res.statusCode, body: res.body === '' ? '' : res.json() });

  it('the grant endpoint: another account’s client is invalid_client, exactly as an unknown one', async () => {
    const asked = (id: string, secret: string) => protocol('/oauth/tokens', acmeHost, { grant_type: 'client_credentials', client_id: id, client_secret: secret });
    const unknown = json(await asked(UNKNOWN, conf.secret));
    expect(unknown).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
    expect(json(await asked(conf.identifier, conf.secret))).toEqual(unknown);
    // and the authorization_code grant of a public client
    const code = (id: string) => protocol('/oauth/tokens', acmeHost, { grant_type: 'authorization_code', client_id: id, code: 'c'.repeat(43), redirect_uri: REDIRECT });
    expect(json(await code(pub.identifier))).toEqual(json(await code(UNKNOWN)));
    // on its own host the client gets its token
    const own = await protocol('/oauth/tokens', globexHost, { grant_type: 'client_credentials', client_id: conf.identifier, client_secret: conf.secret });
    expect(own.statusCode).toBe(200);
  });

  it('a malformed Host (PUBLIC_URL unset) is invalid_request, not a 500', async () => {
    const res = await protocol('/oauth/tokens', 'bad host[', { grant_type: 'client_credentials', client_id: conf.identifier, client_secret: conf.secret });
    expect(json(res)).toEqual({ status: 400, body: { error: 'invalid_request', error_description: 'Invalid Host header' } });
  });

  it('revocation and introspection: another account’s client is invalid_client, and the token is left alone', async () => {
    const issued = await protocol('/oauth/tokens', globexHost, { grant_type: 'client_credentials', client_id: conf.identifier, client_secret: conf.secret });
    const token = issued.json().access_token as string;
    for (const path of ['/oauth/revoke', '/oauth/introspect']) {
      const unknown = json(await protocol(path, acmeHost, { token, client_id: UNKNOWN, client_secret: conf.secret }));
      expect(unknown).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
      expect(json(await protocol(path, acmeHost, { token, client_id: conf.identifier, client_secret: conf.secret }))).toEqual(unknown);
    }
    const current = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', headers: { authorization: `Bearer ${token}`, host: globexHost } });
    expect(current.statusCode).toBe(200);
    // on its own host, introspection works
    const own = await protocol('/oauth/introspect', globexHost, { token, client_id: conf.identifier, client_secret: conf.secret });
    expect(own.json()).toMatchObject({ active: true });
  });
});
