import { createClient } from 'node-zendesk';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// Issue 25: the most used Zendesk client library, unmodified, against a real HTTP server of
// this service. Its default sign-in is `username` + API `token` (Basic `{email}/token:{token}`,
// docs/api.md "API tokens"); with `useOAuth: true` it sends the token as a Bearer token.

interface ClientJson {
  id: number;
  name: string;
  client_secret: string;
}
interface TokenJson {
  id: number;
  token: string;
  client_id: number;
  user_id: number;
  scopes: string[];
}

describe('node-zendesk 6, unmodified, against the service (README "Using node-zendesk")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let endpointUri: string;
  let apiToken: string;
  let client: ClientJson;

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    endpointUri = `${await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' })}/api/v2`;
    const json = { 'content-type': 'application/json', authorization: admin.basic };
    apiToken = (await ctx.inject({ method: 'POST', url: '/api/v2/api_tokens', headers: json, payload: { api_token: { description: 'node-zendesk' } } })).json().api_token.token;
    client = (await ctx.inject({ method: 'POST', url: '/api/v2/oauth/clients', headers: json, payload: { name: 'Integration', scopes: 'read write', redirect_uris: 'https://app.example.com/cb' } })).json();
  });
  afterAll(() => ctx.close());

  const withApiToken = () => createClient({ username: admin.email, token: apiToken, endpointUri });

  it('lists OAuth clients with username + API token', async () => {
    const clients = (await withApiToken().oauthclients.list()) as ClientJson[];
    expect(clients.map((c) => [c.id, c.name, c.client_secret])).toEqual([[client.id, 'Integration', `${client.client_secret.slice(0, 10)}...`]]);
  });

  it('creates an OAuth token and lists tokens with username + API token', async () => {
    const zd = withApiToken();
    const created = (await zd.oauthtokens.create({ client_id: client.id, scopes: ['read', 'write'] })) as { response: { status: number }; result: TokenJson };
    expect(created.response.status).toBe(201);
    expect(created.result).toMatchObject({ client_id: client.id, user_id: Number(admin.id), scopes: ['read', 'write'], token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    // node-zendesk returns the pages of a list it does not know the key of as they came
    const pages = (await zd.oauthtokens.list()) as { tokens: TokenJson[] }[];
    const listed = pages.flatMap((p) => p.tokens);
    expect(listed.map((t) => [t.id, t.token])).toEqual([[created.result.id, created.result.token.slice(0, 10)]]);
  });

  it('regenerates a client secret with username + API token (PUT /oauth/clients/{id}/generate_secret)', async () => {
    const result = (await withApiToken().oauthclients.generateSecret(client.id)) as { response: { status: number }; result: Record<string, unknown> };
    // the seed's answer, {"client_secret": "<the full new secret>"}
    expect([result.response.status, result.result]).toEqual([200, { client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43,}$/) }]);
    expect(result.result.client_secret).not.toBe(client.client_secret);
    const listed = (await withApiToken().oauthclients.list()) as ClientJson[];
    expect(listed[0].client_secret).toBe(`${String(result.result.client_secret).slice(0, 10)}...`);
  });

  it('is refused (the library throws a 401) once the API token is wrong', async () => {
    const zd = createClient({ username: admin.email, token: `${apiToken.slice(0, -1)}x`, endpointUri });
    await expect(zd.oauthclients.list()).rejects.toThrow(/401/);
  });

  it('works with useOAuth and an OAuth access token (Bearer)', async () => {
    const created = await ctx.inject({
      method: 'POST', url: '/api/v2/oauth/tokens', headers: { 'content-type': 'application/json', authorization: admin.basic }, payload: { token: { client_id: client.id, scopes: ['read', 'write'] } },
    });
    const accessToken = created.json().token.token as string;
    const zd = createClient({ token: accessToken, useOAuth: true, endpointUri });
    const current = (await zd.oauthtokens.current()) as { result: TokenJson };
    expect(current.result).toMatchObject({ id: created.json().token.id, user_id: Number(admin.id) });
    expect(((await zd.oauthclients.list()) as ClientJson[]).map((c) => c.id)).toEqual([client.id]);
  });
});
