import { REDIRECT, RFC7636, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';

// A used authorization code presented again by ITS client revokes the grant
// (RFC 6749 §4.1.2). Presented by ANOTHER client, it must be invalid_grant and
// change nothing: before, the reuse check ran before the client check, so anyone
// who saw a used code (a log, a Referer, a browser history) could revoke a user's
// grant with a public client of any account, no secret needed.

describe('an authorization code presented by another client', () => {
  let s: OAuthStack;
  let owner: RegisteredClient;
  let stranger: RegisteredClient;

  beforeAll(async () => {
    s = await startOAuthStack();
    owner = await s.register({ type: 'public' });
    const elsewhere = await s.ctx.createAccount();
    stranger = await s.register({ type: 'public', by: await s.ctx.createUser(elsewhere, 'admin') });
  });
  afterAll(() => s.close());

  const exchange = (c: RegisteredClient, code: string) =>
    s.post('/oauth/tokens', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.identifier, code_verifier: RFC7636.verifier });

  it('after the code was used: invalid_grant, and the owner’s tokens keep working', async () => {
    const code = (await s.authorize(owner, { verifier: RFC7636.verifier })).get('code')!;
    const issued = await exchange(owner, code);
    expect(issued.status).toBe(200);
    const replay = await exchange(stranger, code);
    expect({ status: replay.status, error: replay.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    expect(replay.body.error_description).toBe('The authorization code is invalid');
    expect((await s.current(issued.body.access_token)).status).toBe(200);
    const refreshed = await s.post('/oauth/tokens', { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, client_id: owner.identifier });
    expect(refreshed.status).toBe(200);
  });

  it('before the code was used: the same answer, and the owner still redeems it', async () => {
    const code = (await s.authorize(owner, { verifier: RFC7636.verifier })).get('code')!;
    const early = await exchange(stranger, code);
    expect({ status: early.status, body: early.body }).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'The authorization code is invalid' } });
    expect((await exchange(owner, code)).status).toBe(200);
  });

  it('its own client replaying it still revokes the grant', async () => {
    const code = (await s.authorize(owner, { verifier: RFC7636.verifier })).get('code')!;
    const issued = await exchange(owner, code);
    const replay = await exchange(owner, code);
    expect({ status: replay.status, error: replay.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    expect((await s.current(issued.body.access_token)).status).toBe(401);
  });
});
