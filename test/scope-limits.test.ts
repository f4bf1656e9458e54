import { basicClientAuth } from './helpers/oauth-server';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md "OAuth tokens" and "OAuth 2.0 authorization server": a list of scopes
// holds at most 50, of at most 100 characters each, and no NUL, whether it comes as
// a token's `scopes` or as the grant endpoint's `scope` parameter.

const fifty = Array.from({ length: 50 }, (_, i) => `x${i}`);

describe('scope-list limits, the same on the token API and on the grant endpoint', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let client: { id: number; identifier: string; secret: string };

  beforeAll(async () => {
    ctx = await createTestApp();
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
    const res = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: admin.basic },
      payload: { name: 'Scopes', client_type: 'confidential', scopes: 'read write', redirect_uris: ['https://app.example.com/cb'] },
    });
    const c = res.json();
    client = { id: c.id, identifier: c.client_identifier, secret: c.client_secret };
  });
  afterAll(() => ctx.close());

  const createToken = (scopes: string[]) =>
    ctx.inject({ method: 'POST', url: '/api/v2/oauth/tokens', headers: { authorization: admin.basic }, payload: { token: { client_id: client.id, scopes } } });
  const grant = (scope: string) =>
    ctx.inject({
      method: 'POST', url: '/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicClientAuth(client.identifier, client.secret) },
      payload: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    });

  it('POST /api/v2/oauth/tokens: 50 scopes are taken; 51, one over 100 characters or a NUL are 422', async () => {
    expect((await createToken(fifty)).statusCode).toBe(201);
    const tooLong = { scopes: [{ error: 'TooLong', description: 'Scopes: at most 50 scopes of at most 100 characters' }] };
    for (const scopes of [[...fifty, 'x50'], ['read', 'x'.repeat(101)]]) {
      const res = await createToken(scopes);
      expect([res.statusCode, res.json().details]).toEqual([422, tooLong]);
    }
    const nul = await createToken(['read\u0000']);
    expect([nul.statusCode, nul.json().details]).toEqual([422, { scopes: [{ error: 'InvalidValue', description: 'Scopes: must not contain NUL characters' }] }]);
  });

  // (a NUL in any parameter is refused before, as invalid_request)
  it('the grant endpoint: 51 scopes, or one over 100 characters, are invalid_scope', async () => {
    expect((await grant('read write')).statusCode).toBe(200);
    for (const scope of [[...fifty, 'x50'].join(' '), `read ${'x'.repeat(101)}`]) {
      const res = await grant(scope);
      expect([res.statusCode, res.json().error]).toEqual([400, 'invalid_scope']);
    }
  });
});
