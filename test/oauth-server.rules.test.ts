import fc from 'fast-check';
import * as oauth from 'oauth4webapi';
import { AccessDeniedError } from '../src/domain/oauth-server/oauth-errors';
import { authorizationResponseUrl } from '../src/domain/oauth-server/oauth-server.service';
import { basicClientAuth, REDIRECT, RFC7636, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';

// Every rule of the authorization server (docs/api.md, "OAuth 2.0 authorization
// server"), one test each, over real HTTP: what the client sees (status, body,
// headers) and what is stored.

describe('OAuth 2.0 authorization server rules', () => {
  let s: OAuthStack;
  let conf: RegisteredClient;
  let pub: RegisteredClient;
  const TOKEN = '/oauth/tokens';

  beforeAll(async () => {
    s = await startOAuthStack();
    conf = await s.register({ type: 'confidential' });
    pub = await s.register({ type: 'public' });
  });
  afterAll(() => s.close());

  const validate = (query: Record<string, unknown>) => s.ctx.app.services.oauthServer.validateAuthorizationRequest(query);
  const authQuery = (c: RegisteredClient, extra: Record<string, unknown> = {}) => ({
    response_type: 'code', client_id: c.identifier, redirect_uri: REDIRECT, state: 'S-42', code_challenge: RFC7636.challenge, code_challenge_method: 'S256', ...extra,
  });
  const exchange = (c: RegisteredClient, code: string, extra: Record<string, string> = {}) =>
    s.post(TOKEN, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.identifier, ...(c.type === 'confidential' ? { client_secret: c.secret } : {}), code_verifier: RFC7636.verifier, ...extra });
  const codeOf = async (c: RegisteredClient, opts: { verifier?: string | null } = {}) =>
    (await s.authorize(c, { verifier: opts.verifier === undefined ? RFC7636.verifier : opts.verifier })).get('code')!;
  const expectOAuthError = (res: { status: number; headers: Headers; body: any }, status: number, error: string) => {
    expect({ status: res.status, error: res.body?.error }).toEqual({ status, error });
    expect(typeof res.body.error_description).toBe('string');
    expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
    expect(res.headers.get('cache-control')).toBe('no-store');
  };

  describe('the authorization request (validateAuthorizationRequest)', () => {
    it('accepts an exact registered redirect_uri and defaults the scope to the client\'s', async () => {
      const check = await validate(authQuery(pub));
      expect(check).toMatchObject({ ok: true, request: { redirectUri: REDIRECT, scope: ['read', 'write'], state: 'S-42', codeChallengeMethod: 'S256' } });
    });

    it.each([
      ['a prefix', 'https://app.example.com/oauth/'],
      ['a longer path', `${REDIRECT}/evil`],
      ['a subdomain', 'https://evil.app.example.com/oauth/callback'],
      ['another host with the registered one as prefix', 'https://app.example.com.evil.test/oauth/callback'],
      ['an added query', `${REDIRECT}?next=https://evil.test`],
      ['a fragment', `${REDIRECT}#x`],
      ['another port', 'https://app.example.com:444/oauth/callback'],
      ['a different case', 'https://APP.example.com/oauth/callback'],
      ['a trailing slash', `${REDIRECT}/`],
      ['percent-encoding', 'https://app.example.com/oauth/%63allback'],
      ['http instead of https', 'http://app.example.com/oauth/callback'],
      ['missing', undefined],
      ['repeated', [REDIRECT, REDIRECT]],
    ])('refuses %s redirect_uri with an error page, never a redirect', async (_name, redirect) => {
      const check = await validate(authQuery(pub, { redirect_uri: redirect }));
      expect(check).toMatchObject({ ok: false, show: 'page' });
      expect(check).not.toHaveProperty('redirectUri');
    });

    it('an unknown or missing client_id is an error page', async () => {
      expect(await validate(authQuery(pub, { client_id: 'nobody' }))).toMatchObject({ ok: false, show: 'page' });
      expect(await validate(authQuery(pub, { client_id: undefined }))).toMatchObject({ ok: false, show: 'page' });
    });

    it.each([
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['no response_type', { response_type: undefined }, 'invalid_request'],
      ['an unknown scope', { scope: 'read tickets:delete' }, 'invalid_scope'],
      ['a scope beyond the client', { scope: 'read write' }, 'invalid_scope'],
      ['PKCE plain', { code_challenge: RFC7636.verifier, code_challenge_method: 'plain' }, 'invalid_request'],
      ['a challenge without method (plain by default)', { code_challenge_method: undefined }, 'invalid_request'],
      ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
      ['a repeated scope parameter', { scope: ['read', 'read'] }, 'invalid_request'],
    ])('%s: redirect back with the error and the state echoed', async (_name, extra, error) => {
      const readOnly = await s.register({ type: 'public', scopes: 'read' });
      const check = await validate(authQuery(readOnly, extra));
      expect(check).toMatchObject({ ok: false, show: 'redirect', redirectUri: REDIRECT, state: 'S-42', error: { error } });
      if (check.ok || check.show !== 'redirect') throw new Error('unreachable');
      const url = new URL(authorizationResponseUrl(check.redirectUri, { ...check.error.toJSON(), state: check.state, iss: s.as.issuer }));
      expect(url.origin + url.pathname).toBe(REDIRECT);
      expect(url.searchParams.get('error')).toBe(error);
      expect(url.searchParams.get('state')).toBe('S-42');
      // and a client library reads it as an error response
      expect(() => oauth.validateAuthResponse(s.as, readOnly.client, url, 'S-42')).toThrow(oauth.AuthorizationResponseError);
    });

    it('a public client must use PKCE; a confidential one may go without', async () => {
      const noPkce = { code_challenge: undefined, code_challenge_method: undefined };
      expect(await validate(authQuery(pub, noPkce))).toMatchObject({ ok: false, show: 'redirect', error: { error: 'invalid_request' }, state: 'S-42' });
      expect(await validate(authQuery(conf, noPkce))).toMatchObject({ ok: true });
    });

    it('keeps the registered URI\'s own query when redirecting back', () => {
      expect(authorizationResponseUrl('https://a.example/cb?tenant=1', { code: 'c', state: 's t' })).toBe('https://a.example/cb?tenant=1&code=c&state=s+t');
    });

    it('issues a code only to a user of the client\'s account', async () => {
      const other = await s.ctx.createUser(await s.ctx.createAccount(), 'admin');
      const check = await validate(authQuery(pub));
      if (!check.ok) throw new Error('refused');
      await expect(s.ctx.app.services.oauthServer.issueAuthorizationCode({ ...check.request, user: s.viewerOf(other) })).rejects.toBeInstanceOf(AccessDeniedError);
    });
  });

  describe('authorization_code', () => {
    it('stores the code as a keyed hash, valid 120 s, and redeems it once', async () => {
      const code = await codeOf(pub);
      const [row] = await s.ctx.db.sql<{ code_hash: string; life: number }>(
        `SELECT code_hash, extract(epoch FROM expires_at - created_at)::int AS life FROM oauth_authorization_codes ORDER BY id DESC LIMIT 1`,
      );
      expect(row.life).toBe(120);
      expect(row.code_hash).not.toContain(code);
      const ok = await exchange(pub, code);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('cache-control')).toBe('no-store');
      expect(Object.keys(ok.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'refresh_token_expires_in', 'scope', 'token_type']);
    });

    it('a code presented twice is refused, and every token issued from it is revoked', async () => {
      const code = await codeOf(pub);
      const first = await exchange(pub, code);
      expect(first.status).toBe(200);
      expect((await s.current(first.body.access_token)).status).toBe(200);
      expectOAuthError(await exchange(pub, code), 400, 'invalid_grant');
      expect((await s.current(first.body.access_token)).status).toBe(401);
      expectOAuthError(await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: pub.identifier }), 400, 'invalid_grant');
    });

    it('expires after 120 s', async () => {
      const code = await codeOf(pub);
      await s.ctx.db.sql(`UPDATE oauth_authorization_codes SET created_at = created_at - interval '121 seconds', expires_at = expires_at - interval '121 seconds'`);
      expectOAuthError(await exchange(pub, code), 400, 'invalid_grant');
    });

    it('is bound to its client and its redirect_uri (a failed attempt leaves the code usable)', async () => {
      const code = await codeOf(pub);
      const otherPublic = await s.register({ type: 'public' });
      expectOAuthError(await exchange(otherPublic, code), 400, 'invalid_grant');
      expectOAuthError(await exchange(pub, code, { redirect_uri: `${REDIRECT}/x` }), 400, 'invalid_grant');
      expectOAuthError(await exchange(pub, code, { redirect_uri: '' }), 400, 'invalid_request');
      expect((await exchange(pub, code)).status).toBe(200);
    });

    it('PKCE: a wrong or missing verifier is refused; so is a verifier for a code issued without challenge (downgrade)', async () => {
      const code = await codeOf(pub);
      expectOAuthError(await exchange(pub, code, { code_verifier: 'x'.repeat(43) }), 400, 'invalid_grant');
      expectOAuthError(await exchange(pub, code, { code_verifier: '' }), 400, 'invalid_grant');
      expectOAuthError(await exchange(pub, code, { code_verifier: 'bad verifier' }), 400, 'invalid_request');
      const without = await codeOf(conf, { verifier: null });
      expectOAuthError(await exchange(conf, without), 400, 'invalid_grant');
      expect((await exchange(conf, without, { code_verifier: '' })).status).toBe(200);
    });

    it('a confidential client must authenticate: 401 invalid_client with WWW-Authenticate when Basic was used, 400 otherwise', async () => {
      const code = await codeOf(conf);
      const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier };
      expectOAuthError(await s.post(TOKEN, { ...base, client_id: conf.identifier }), 400, 'invalid_client');
      expectOAuthError(await s.post(TOKEN, { ...base, client_id: conf.identifier, client_secret: 'wrong' }), 400, 'invalid_client');
      const basic = await s.post(TOKEN, base, { authorization: basicClientAuth(conf.identifier, 'wrong') });
      expectOAuthError(basic, 401, 'invalid_client');
      expect(basic.headers.get('www-authenticate')).toMatch(/^Basic realm="oauth"/);
      expectOAuthError(await s.post(TOKEN, { ...base, client_id: 'unknown' }), 400, 'invalid_client');
      expectOAuthError(await s.post(TOKEN, { ...base, client_secret: conf.secret }, { authorization: basicClientAuth(conf.identifier, conf.secret) }), 400, 'invalid_request');
      // and then with Basic, form-urlencoded inside (RFC 6749 §2.3.1)
      expect((await s.post(TOKEN, base, { authorization: basicClientAuth(conf.identifier, conf.secret) })).status).toBe(200);
    });
  });

  describe('the token endpoint in general', () => {
    it.each(['password', 'implicit', 'token', 'urn:ietf:params:oauth:grant-type:device_code', 'foo'])('grant_type=%s is unsupported_grant_type', async (grant) => {
      expectOAuthError(await s.post(TOKEN, { grant_type: grant, client_id: conf.identifier, client_secret: conf.secret, username: 'a', password: 'b' }), 400, 'unsupported_grant_type');
    });

    it('takes JSON bodies (Zendesk) as well as forms (RFC 6749)', async () => {
      const json = await s.postJson(TOKEN, { grant_type: 'client_credentials', client_id: conf.identifier, client_secret: conf.secret, scope: 'read', expires_in: 600 });
      expect(json.status).toBe(200);
      expect(json.body).toMatchObject({ token_type: 'bearer', scope: 'read', expires_in: 600 });
      const form = await s.post(TOKEN, { grant_type: 'client_credentials', client_id: conf.identifier, client_secret: conf.secret, expires_in: '600' });
      expect(form.body).toMatchObject({ scope: 'read write', expires_in: 600 });
    });

    it.each([
      ['300', 'invalid_request'], ['172800', 'invalid_request'], ['1e3', 'invalid_request'], ['-5', 'invalid_request'], ['301', null], ['172799', null],
    ])('expires_in=%s: strictly between 300 and 172800', async (value, error) => {
      const res = await s.post(TOKEN, { grant_type: 'client_credentials', client_id: conf.identifier, client_secret: conf.secret, expires_in: value });
      if (error) expectOAuthError(res, 400, error);
      else expect(res.body.expires_in).toBe(Number(value));
    });

    it('refresh_token_expires_in: strictly between 604800 and 7776000', async () => {
      const code = await codeOf(pub);
      expectOAuthError(await exchange(pub, code, { refresh_token_expires_in: '604800' }), 400, 'invalid_request');
      const ok = await exchange(pub, code, { refresh_token_expires_in: '604801' });
      expect(ok.body.refresh_token_expires_in).toBe(604801);
    });

    it.each([
      ['no grant_type', 'application/x-www-form-urlencoded', 'client_id=x', 400, 'invalid_request'],
      ['a repeated parameter', 'application/x-www-form-urlencoded', 'grant_type=client_credentials&grant_type=client_credentials', 400, 'invalid_request'],
      ['garbage form', 'application/x-www-form-urlencoded', '%%%&&&==%zz', 400, 'invalid_request'],
      ['invalid UTF-8', 'application/x-www-form-urlencoded', Buffer.from([0x67, 0x3d, 0xff, 0xfe]), 400, 'invalid_request'],
      ['malformed JSON', 'application/json', '{"grant_type":', 400, 'invalid_request'],
      ['a JSON array', 'application/json', '["grant_type"]', 400, 'invalid_request'],
      ['a JSON number for grant_type', 'application/json', '{"grant_type": 5}', 400, 'invalid_request'],
      ['a JSON object for client_id', 'application/json', '{"grant_type": "client_credentials", "client_id": {"a": 1}}', 400, 'invalid_request'],
      ['text/plain', 'text/plain', 'grant_type=client_credentials', 400, 'invalid_request'],
      ['a body over 64 KiB', 'application/x-www-form-urlencoded', `grant_type=${'x'.repeat(70_000)}`, 413, 'invalid_request'],
      ['a NUL in a parameter', 'application/x-www-form-urlencoded', 'grant_type=client%00credentials', 400, 'invalid_request'],
    ])('%s: an RFC 6749 error, never a 500', async (_name, type, body, status, error) => {
      const res = await fetch(`${s.base}${TOKEN}`, { method: 'POST', headers: { 'content-type': type }, body });
      const parsed = { status: res.status, headers: res.headers, body: await res.json() };
      expectOAuthError(parsed, status, error);
    });

    it('the rest of the API stays JSON-only: a form body there is 415', async () => {
      const res = await fetch(`${s.base}/api/v2/oauth/clients`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: s.admin.basic }, body: 'name=x&scopes=read',
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ error: 'UnsupportedMediaType' });
    });

    it('a refresh token covers its original scopes or fewer', async () => {
      const first = await exchange(pub, await codeOf(pub));
      expectOAuthError(await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: pub.identifier, scope: 'read impersonate' }), 400, 'invalid_scope');
      const narrowed = await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: pub.identifier, scope: 'read' });
      expect(narrowed.body.scope).toBe('read');
    });

    it('a refresh token is bound to its client', async () => {
      const first = await exchange(pub, await codeOf(pub));
      const other = await s.register({ type: 'public' });
      expectOAuthError(await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: other.identifier }), 400, 'invalid_grant');
      expect((await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: pub.identifier })).status).toBe(200);
    });
  });

  describe('hostile input', () => {
    const NAMES = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret', 'token', 'token_type_hint', 'expires_in', 'refresh_token_expires_in'];
    const value = fc.oneof(
      fc.string({ maxLength: 50 }),
      fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'password', '', '\u0000', 'read write', '99999999999999999999'),
      fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }), fc.object({ maxDepth: 1 }),
    );
    const params = fc.dictionary(fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 10 })), value, { maxKeys: 8 });

    it('random parameters, as JSON or as a form, at every endpoint: always an RFC 6749 error or a success, never a 5xx', async () => {
      const clientIds = () => fc.constantFrom(conf.identifier, pub.identifier, 'nobody');
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('/oauth/tokens', '/oauth/revoke', '/oauth/introspect'), params, clientIds(), fc.boolean(), fc.boolean(), async (path, p, id, asJson, basic) => {
          const headers: Record<string, string> = basic ? { authorization: basicClientAuth(id, conf.secret) } : {};
          const res = asJson
            ? await s.postJson(path, p, headers)
            : await s.post(path, Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])), headers);
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400) expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
        }),
        { numRuns: 300 },
      );
    });

    it('writes no token, code or secret to the log', async () => {
      const code = await codeOf(pub);
      const tokens = (await exchange(pub, code)).body;
      await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: pub.identifier });
      await s.post('/oauth/introspect', { token: tokens.access_token, client_id: conf.identifier, client_secret: conf.secret });
      const logs = s.ctx.logs.join('\n');
      expect(logs).toContain('/oauth/tokens');
      for (const secret of [code, tokens.access_token, tokens.refresh_token, conf.secret, RFC7636.verifier]) expect(logs).not.toContain(secret);
    });
  });

  describe('expiry', () => {
    it('an expired access token answers 401 on REST and GraphQL and is inactive at introspection; its refresh token still works', async () => {
      const tokens = await exchange(pub, await codeOf(pub));
      const bearer = { authorization: `Bearer ${tokens.body.access_token}` };
      await s.ctx.db.sql(`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE token_prefix = $1`, [tokens.body.access_token.slice(0, 10)]);
      expect((await s.current(tokens.body.access_token)).status).toBe(401);
      const gql = await s.ctx.graphql('{ me { id } }', {}, bearer);
      expect(gql.statusCode).toBe(401);
      const introspected = await s.post('/oauth/introspect', { token: tokens.body.access_token }, { authorization: basicClientAuth(conf.identifier, conf.secret) });
      expect(introspected.body).toEqual({ active: false });
      const refreshed = await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: pub.identifier });
      expect(refreshed.status).toBe(200);
    });

    it('an expired refresh token is refused', async () => {
      const tokens = await exchange(pub, await codeOf(pub));
      await s.ctx.db.sql(`UPDATE oauth_tokens SET refresh_token_expires_at = now() - interval '1 second' WHERE token_prefix = $1`, [tokens.body.access_token.slice(0, 10)]);
      expectOAuthError(await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: pub.identifier }), 400, 'invalid_grant');
    });

    it('admin-made tokens still never expire', async () => {
      const res = await s.ctx.inject({ method: 'POST', url: '/api/v2/oauth/tokens', headers: { authorization: s.admin.basic }, payload: { token: { client_id: conf.id, scopes: ['read'] } } });
      expect(res.json().token).toMatchObject({ expires_at: null, refresh_token: null, refresh_token_expires_at: null });
    });
  });

  describe('revocation everywhere, and deleting a client', () => {
    it('revoking an access token through REST kills its refresh token', async () => {
      const tokens = await exchange(pub, await codeOf(pub));
      const id = (await s.current(tokens.body.access_token)).body.token.id;
      expect((await s.ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/tokens/${id}`, headers: { authorization: s.admin.basic } })).statusCode).toBe(204);
      expectOAuthError(await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: pub.identifier }), 400, 'invalid_grant');
    });

    it('revoking the current token through GraphQL kills its refresh token', async () => {
      const tokens = await exchange(pub, await codeOf(pub));
      const gql = await s.ctx.graphql('mutation { revokeCurrentOAuthToken }', {}, { authorization: `Bearer ${tokens.body.access_token}` });
      expect(gql.json().data.revokeCurrentOAuthToken).toBe(true);
      expectOAuthError(await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: pub.identifier }), 400, 'invalid_grant');
    });

    it('revocation and introspection leave other clients\' and other accounts\' tokens alone', async () => {
      const tokens = await exchange(pub, await codeOf(pub));
      const otherAccount = await s.ctx.createAccount();
      const stranger = await s.register({ type: 'confidential', by: await s.ctx.createUser(otherAccount, 'admin') });
      const auth = { authorization: basicClientAuth(stranger.identifier, stranger.secret) };
      expect((await s.post('/oauth/introspect', { token: tokens.body.access_token }, auth)).body).toEqual({ active: false });
      expect((await s.post('/oauth/revoke', { token: tokens.body.access_token }, auth)).status).toBe(200);
      expect((await s.current(tokens.body.access_token)).status).toBe(200);
    });

    it('deleting a client kills its tokens, refresh tokens and codes', async () => {
      const doomed = await s.register({ type: 'public' });
      const tokens = await exchange(doomed, await codeOf(doomed));
      const pending = await codeOf(doomed);
      expect((await s.ctx.inject({ method: 'DELETE', url: `/api/v2/oauth/clients/${doomed.id}`, headers: { authorization: s.admin.basic } })).statusCode).toBe(204);
      expect((await s.current(tokens.body.access_token)).status).toBe(401);
      expectOAuthError(await s.post(TOKEN, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: doomed.identifier }), 400, 'invalid_client');
      expectOAuthError(await exchange(doomed, pending), 400, 'invalid_client');
      const left = await s.ctx.db.sql<{ n: number }>(
        `SELECT (SELECT count(*) FROM oauth_grants WHERE client_id = $1)::int + (SELECT count(*) FROM oauth_authorization_codes WHERE client_id = $1)::int AS n`,
        [String(doomed.id)],
      );
      expect(left[0].n).toBe(0);
    });
  });

  describe('client secret rotation with a grace period', () => {
    const SECRETS = 'query($id: ID!) { oauthClient(id: $id) { secrets { id prefix createdAt lastUsedAt expiresAt } } }';
    const cc = (c: RegisteredClient, secret: string) => s.post(TOKEN, { grant_type: 'client_credentials' }, { authorization: basicClientAuth(c.identifier, secret) });
    const rotate = (c: RegisteredClient, body?: unknown) =>
      s.ctx.inject({ method: 'POST', url: `/api/v2/oauth/clients/${c.id}/client_secret`, headers: { authorization: s.admin.basic }, ...(body === undefined ? {} : { payload: body as object }) });

    it('keeps the previous secret valid at the grant endpoint until the grace period ends; GraphQL shows both; the period can end early', async () => {
      const c = await s.register({ type: 'confidential' });
      expect((await cc(c, c.secret)).status).toBe(200);
      const rotated = await rotate(c, { grace_period: 3600 });
      expect(rotated.statusCode).toBe(200);
      expect(Object.keys(rotated.json())).toEqual(['client_secret']);
      const fresh = rotated.json().client_secret as string;
      expect((await cc(c, c.secret)).status).toBe(200);
      expect((await cc(c, fresh)).status).toBe(200);
      const shown = (await s.ctx.graphql(SECRETS, { id: String(c.id) }, { authorization: s.admin.basic })).json().data.oauthClient.secrets;
      expect(shown.map((x: { prefix: string }) => x.prefix)).toEqual([fresh.slice(0, 10), c.secret.slice(0, 10)]);
      expect(shown[0].expiresAt).toBeNull();
      expect(Date.parse(shown[1].expiresAt) - Date.now()).toBeGreaterThan(3590_000);
      expect(shown.every((x: { lastUsedAt: string | null }) => x.lastUsedAt !== null)).toBe(true);

      const ended = await s.ctx.graphql('mutation($id: ID!) { endOAuthClientSecretGracePeriod(id: $id) { secrets { prefix } } }', { id: String(c.id) }, { authorization: s.admin.basic });
      expect(ended.json().data.endOAuthClientSecretGracePeriod.secrets).toEqual([{ prefix: fresh.slice(0, 10) }]);
      expectOAuthError(await cc(c, c.secret), 401, 'invalid_client');
      expect((await cc(c, fresh)).status).toBe(200);
    });

    it('the previous secret dies when the grace period is over, and at once without one', async () => {
      const c = await s.register({ type: 'confidential' });
      const graced = (await rotate(c, { grace_period: 60 })).json().client_secret as string;
      await s.ctx.db.sql(`UPDATE oauth_client_secrets SET expires_at = now() - interval '1 second' WHERE client_id = $1 AND expires_at IS NOT NULL`, [String(c.id)]);
      expectOAuthError(await cc(c, c.secret), 401, 'invalid_client');
      const next = (await rotate(c)).json().client_secret as string;
      expectOAuthError(await cc(c, graced), 401, 'invalid_client');
      expect((await cc(c, next)).status).toBe(200);
    });

    it.each([[-1], [604_801], ['60'], [1.5]])('grace_period %p is 422', async (value) => {
      const c = await s.register({ type: 'confidential' });
      const res = await rotate(c, { grace_period: value });
      expect(res.statusCode).toBe(422);
      expect(res.json().details.grace_period[0].error).toBe('InvalidValue');
      expect((await cc(c, c.secret)).status).toBe(200);
    });
  });
});
