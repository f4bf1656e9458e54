import { kdfRuns } from '../src/domain/auth/passwords';
import { hmacHex } from '../src/domain/crypto';
import { auditOf } from './helpers/audit';
import { basicHeader, createTestApp, TEST_HASH_KEY, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "API tokens": admins create, list, show and delete the account's API tokens;
// Basic `{email}/token:{api_token}` signs in as that active user of the token's account, with
// the user's own role, throttled and timed like a password, never a KDF once verified, and
// refused on the very next request once the token is deleted, the user deactivated or the
// account's api_token_access turned off.

const json = { 'content-type': 'application/json' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const tokenBasic = (email: string, token: string) => basicHeader(`${email}/token`, token);

describe('API tokens (docs/api.md, "API tokens")', () => {
  let ctx: TestContext;
  let account: bigint;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let other: { account: bigint; admin: TestUser };

  const create = (by: string, payload: unknown, url = '/api/v2/api_tokens') => ctx.inject({ method: 'POST', url, headers: { ...json, authorization: by }, payload: payload as object });
  const get = (url: string, authorization: string, host?: string) => ctx.inject({ method: 'GET', url, headers: host ? { authorization, host } : { authorization } });
  const del = (url: string, authorization: string) => ctx.inject({ method: 'DELETE', url, headers: { authorization } });
  const me = (authorization: string, host?: string) => get('/api/v2/users/me.json', authorization, host);
  const newToken = async (description = 'CRM sync'): Promise<{ id: number; token: string }> => {
    const res = await create(admin.basic, { api_token: { description } });
    expect(res.statusCode).toBe(201);
    return res.json().api_token;
  };
  const setAccess = async (on: boolean) => {
    const res = await ctx.inject({ method: 'PUT', url: '/api/v2/account/settings', headers: { ...json, authorization: admin.basic }, payload: { settings: { api_token_access: on } } });
    expect([res.statusCode, res.json().settings.api_token_access]).toEqual([200, on]);
  };

  beforeAll(async () => {
    ctx = await createTestApp({ publicUrl: 'http://localhost' });
    account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    const otherAccount = await ctx.createAccount();
    other = { account: otherAccount, admin: await ctx.createUser(otherAccount, 'admin') };
  });
  afterAll(() => ctx.close());

  describe('REST', () => {
    it('creates a token shown in full once, stores only its keyed hash and prefix, lists and shows its first characters', async () => {
      const res = await create(admin.basic, { api_token: { description: '  CRM sync  ', token: 'ignored', id: 1 } });
      expect(res.statusCode).toBe(201);
      expect(res.headers['cache-control']).toContain('no-store');
      const created = res.json().api_token;
      expect(created).toEqual({
        id: expect.any(Number), url: `http://localhost/api/v2/api_tokens/${created.id}.json`, description: 'CRM sync',
        token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), created_by: Number(admin.id), created_at: expect.stringMatching(ISO), last_used_at: null,
      });
      expect(res.headers.location).toBe(`http://localhost/api/v2/api_tokens/${created.id}.json`);

      const [row] = await ctx.db.sql<Record<string, unknown>>('SELECT * FROM api_tokens WHERE id = $1', [created.id]);
      expect(row).toMatchObject({ description: 'CRM sync', token_hash: hmacHex(TEST_HASH_KEY, created.token), token_prefix: created.token.slice(0, 10) });
      expect(JSON.stringify(row)).not.toContain(created.token);

      const shown = { ...created, token: `${created.token.slice(0, 10)}...` };
      expect([(await get(`/api/v2/api_tokens/${created.id}.json`, admin.basic)).statusCode, (await get(`/api/v2/api_tokens/${created.id}`, admin.basic)).json()])
        .toEqual([200, { api_token: shown }]);
      const list = await get('/api/v2/api_tokens.json', admin.basic);
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual({ api_tokens: [shown], next_page: null, previous_page: null, count: 1 });
      expect(list.body).not.toContain(created.token);
      expect(ctx.logs.join('\n')).not.toContain(created.token);

      // the audit record and the event name the token by its first characters only
      const audit = await auditOf(ctx, 'api_token', created.id);
      expect(audit.map((a) => [a.action, a.source_label, a.actor_id, a.via, a.changed_fields])).toEqual([['create', shown.token, String(admin.id), 'api', ['description']]]);
      const [event] = await ctx.db.sql<{ type: string; subject: string; detail: Record<string, unknown> }>(
        "SELECT type, subject, detail FROM events WHERE account_id = $1 AND type = 'zen:event-type:api_token.created'", [String(account)],
      );
      expect(event.detail).toEqual({ id: created.id, description: 'CRM sync', token: shown.token, created_by: Number(admin.id), created_at: created.created_at, last_used_at: null });
      expect(JSON.stringify(event)).not.toContain(created.token);

      expect((await del(`/api/v2/api_tokens/${created.id}.json`, admin.basic)).statusCode).toBe(204);
    });

    it('deletes a token: 204, gone from show and list, audited, an api_token.deleted event', async () => {
      const { id, token } = await newToken('to delete');
      const res = await del(`/api/v2/api_tokens/${id}`, admin.basic);
      expect([res.statusCode, res.body]).toEqual([204, '']);
      expect((await get(`/api/v2/api_tokens/${id}`, admin.basic)).json()).toEqual({ error: 'RecordNotFound', description: 'Not found' });
      expect((await del(`/api/v2/api_tokens/${id}`, admin.basic)).statusCode).toBe(404);
      expect((await get('/api/v2/api_tokens', admin.basic)).json().api_tokens.map((t: { id: number }) => t.id)).not.toContain(id);
      expect((await auditOf(ctx, 'api_token', id)).map((a) => a.action)).toEqual(['create', 'destroy']);
      const events = await ctx.db.sql<{ detail: { id: number; token: string } }>("SELECT detail FROM events WHERE type = 'zen:event-type:api_token.deleted' AND subject = $1", [`zen:api_token:${id}`]);
      expect(events.map((e) => e.detail)).toEqual([expect.objectContaining({ id, token: `${token.slice(0, 10)}...` })]);
      expect(await ctx.db.sql('SELECT 1 FROM api_tokens WHERE id = $1', [id])).toEqual([]);
    });

    it('refuses agents and end users (403) and a blank or too long description (422)', async () => {
      const { id } = await newToken('roles');
      for (const user of [agent, endUser]) {
        const forbidden = { error: 'Forbidden', description: 'You do not have access to this resource' };
        expect([(await get('/api/v2/api_tokens', user.basic)).statusCode, (await get('/api/v2/api_tokens', user.basic)).json()]).toEqual([403, forbidden]);
        expect((await get(`/api/v2/api_tokens/${id}`, user.basic)).statusCode).toBe(403);
        expect((await create(user.basic, { api_token: { description: 'x' } })).statusCode).toBe(403);
        expect((await del(`/api/v2/api_tokens/${id}`, user.basic)).statusCode).toBe(403);
      }
      const blank = await create(admin.basic, { api_token: { description: ' ' } });
      expect([blank.statusCode, blank.json().details.description[0].error]).toEqual([422, 'BlankValue']);
      expect((await create(admin.basic, { api_token: {} })).statusCode).toBe(422);
      const long = await create(admin.basic, { api_token: { description: 'x'.repeat(256) } });
      expect([long.statusCode, long.json().details.description[0].error]).toEqual([422, 'TooLong']);
      expect((await create(admin.basic, { api_token: { description: 5 } })).statusCode).toBe(422);
      await del(`/api/v2/api_tokens/${id}`, admin.basic);
    });

    it("answers another account's token id exactly like a missing one (404), and lists only the account's", async () => {
      const { id } = await newToken('mine');
      for (const res of [await get(`/api/v2/api_tokens/${id}`, other.admin.basic), await del(`/api/v2/api_tokens/${id}`, other.admin.basic), await get('/api/v2/api_tokens/999999999', admin.basic)]) {
        expect([res.statusCode, res.json()]).toEqual([404, { error: 'RecordNotFound', description: 'Not found' }]);
      }
      expect((await get('/api/v2/api_tokens', other.admin.basic)).json().api_tokens).toEqual([]);
      expect((await get(`/api/v2/api_tokens/${id}`, admin.basic)).statusCode).toBe(200);
      await del(`/api/v2/api_tokens/${id}`, admin.basic);
    });

    it('pages like the other lists: cursor mode with meta and links, offset mode with count', async () => {
      const ids = [(await newToken('p1')).id, (await newToken('p2')).id, (await newToken('p3')).id];
      const first = (await get('/api/v2/api_tokens.json?page[size]=2', admin.basic)).json();
      expect(first.api_tokens.map((t: { id: number }) => t.id)).toEqual(ids.slice(0, 2));
      expect(first.meta.has_more).toBe(true);
      const next = (await get(new URL(first.links.next).pathname + new URL(first.links.next).search, admin.basic)).json();
      expect(next.api_tokens.map((t: { id: number }) => t.id)).toEqual([ids[2]]);
      expect(next.meta.has_more).toBe(false);
      const offset = (await get('/api/v2/api_tokens?page=2&per_page=2', admin.basic)).json();
      expect([offset.api_tokens.map((t: { id: number }) => t.id), offset.count, offset.next_page]).toEqual([[ids[2]], 3, null]);
      for (const id of ids) await del(`/api/v2/api_tokens/${id}`, admin.basic);
    });
  });

  describe('GraphQL', () => {
    it('creates, lists, shows and deletes with every role check of REST', async () => {
      const created = await ctx.graphql('mutation($d: String) { createApiToken(input: { description: $d }) { id description token createdBy lastUsedAt } }', { d: 'GraphQL' }, { authorization: admin.basic });
      const token = created.json().data.createApiToken;
      expect(token).toEqual({ id: expect.any(String), description: 'GraphQL', token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), createdBy: String(admin.id), lastUsedAt: null });
      const listed = await ctx.graphql('{ apiTokens(first: 10) { totalCount edges { node { id token } } } }', {}, { authorization: admin.basic });
      expect(listed.json().data.apiTokens).toEqual({ totalCount: 1, edges: [{ node: { id: token.id, token: `${token.token.slice(0, 10)}...` } }] });
      expect((await ctx.graphql('query($id: ID!) { apiToken(id: $id) { id } }', { id: token.id }, { authorization: other.admin.basic })).json().data.apiToken).toBeNull();
      const denied = await ctx.graphql('{ apiTokens { totalCount } }', {}, { authorization: agent.basic });
      expect(denied.json().errors[0].extensions.code).toBe('FORBIDDEN');
      const missing = await ctx.graphql('mutation($id: ID!) { deleteApiToken(id: $id) }', { id: token.id }, { authorization: other.admin.basic });
      expect(missing.json().errors[0].extensions.code).toBe('NOT_FOUND');
      expect((await ctx.graphql('mutation($id: ID!) { deleteApiToken(id: $id) }', { id: token.id }, { authorization: admin.basic })).json().data).toEqual({ deleteApiToken: true });
    });
  });

  describe('Basic {email}/token:{api_token}', () => {
    it("signs in admins, agents and end users of the token's account with their own role", async () => {
      const { id, token } = await newToken('sign-in');
      for (const user of [admin, agent, endUser]) {
        const res = await me(tokenBasic(user.email.toUpperCase(), token));
        expect([res.statusCode, res.json().user.id, res.json().user.role]).toEqual([200, Number(user.id), user.role]);
      }
      const via = await ctx.graphql('{ me { authenticatedVia } }', {}, { authorization: tokenBasic(agent.email, token) });
      expect(via.json().data.me.authenticatedVia).toBe('api_token');
      // the user's role decides: an agent may not list tokens, an admin may
      expect((await get('/api/v2/api_tokens', tokenBasic(agent.email, token))).statusCode).toBe(403);
      expect((await get('/api/v2/api_tokens', tokenBasic(admin.email, token))).statusCode).toBe(200);
      // last_used_at is set by the sign-in, and written at most once a minute
      const [first] = await ctx.db.sql<{ last_used_at: Date }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [id]);
      expect((await get(`/api/v2/api_tokens/${id}`, admin.basic)).json().api_token.last_used_at).toBe(first.last_used_at.toISOString().replace(/\.\d{3}Z$/, 'Z'));
      expect((await me(tokenBasic(admin.email, token))).statusCode).toBe(200);
      const [again] = await ctx.db.sql<{ last_used_at: Date }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [id]);
      expect(again.last_used_at.getTime()).toBe(first.last_used_at.getTime());
      await ctx.db.sql("UPDATE api_tokens SET last_used_at = now() - interval '61 seconds' WHERE id = $1", [id]);
      expect((await me(tokenBasic(admin.email, token))).statusCode).toBe(200);
      const [later] = await ctx.db.sql<{ last_used_at: Date }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [id]);
      expect(Date.now() - later.last_used_at.getTime()).toBeLessThan(30_000);
      // X-On-Behalf-Of stays refused with Basic
      const onBehalf = await ctx.inject({ method: 'GET', url: '/api/v2/users/me', headers: { authorization: tokenBasic(admin.email, token), 'x-on-behalf-of': endUser.email } });
      expect(onBehalf.statusCode).toBe(403);
      // the token is never logged, in full or as the Basic credentials that carry it
      expect(ctx.logs.join('\n')).not.toContain(token);
      expect(ctx.logs.join('\n')).not.toContain(tokenBasic(admin.email, token).slice(6));
      await del(`/api/v2/api_tokens/${id}`, admin.basic);
    });

    it('refuses, like a wrong token: an unknown token, a deactivated user, an email of another account, a token on another account\'s subdomain', async () => {
      const { id, token } = await newToken('refusals');
      const unauthorized = { error: "Couldn't authenticate you" };
      const refused = async (authorization: string, host?: string) => {
        const res = await me(authorization, host);
        expect([res.statusCode, res.json(), res.headers['www-authenticate']]).toEqual([401, unauthorized, 'Basic realm="api"']);
      };
      await refused(tokenBasic(admin.email, `${token.slice(0, -1)}x`));
      await refused(tokenBasic(other.admin.email, token));
      await refused(tokenBasic('nobody@example.com', token));
      // the token is not a password, nor a password a token
      await refused(basicHeader(admin.email, token));
      await refused(tokenBasic(admin.email, admin.password));
      const [{ subdomain: mine }] = await ctx.db.sql<{ subdomain: string }>('SELECT subdomain FROM accounts WHERE id = $1', [String(account)]);
      const [{ subdomain: theirs }] = await ctx.db.sql<{ subdomain: string }>('SELECT subdomain FROM accounts WHERE id = $1', [String(other.account)]);
      expect((await me(tokenBasic(admin.email, token), `${mine}.localhost`)).statusCode).toBe(200);
      await refused(tokenBasic(admin.email, token), `${theirs}.localhost`);

      const leaving = await ctx.createUser(account, 'agent');
      expect((await me(tokenBasic(leaving.email, token))).statusCode).toBe(200);
      await ctx.db.sql('UPDATE users SET active = false WHERE id = $1', [String(leaving.id)]);
      await refused(tokenBasic(leaving.email, token));
      await del(`/api/v2/api_tokens/${id}`, admin.basic);
    });

    it('runs no KDF once verified, and refuses a deleted token on the very next request', async () => {
      const { id, token } = await newToken('cache');
      const auth = tokenBasic(agent.email, token);
      let before = kdfRuns();
      expect((await me(auth)).statusCode).toBe(200);
      expect(kdfRuns() - before).toBe(1); // the first sign-in is timed like a password's
      before = kdfRuns();
      for (let i = 0; i < 3; i++) expect((await me(auth)).statusCode).toBe(200);
      expect(kdfRuns() - before).toBe(0);
      expect((await del(`/api/v2/api_tokens/${id}`, admin.basic)).statusCode).toBe(204);
      const res = await me(auth);
      expect([res.statusCode, res.json()]).toEqual([401, { error: "Couldn't authenticate you" }]);
    });

    it('api_token_access off refuses token sign-ins at once (401) while admins still manage tokens; on again, they work', async () => {
      const { id, token } = await newToken('access');
      const auth = tokenBasic(agent.email, token);
      expect((await me(auth)).statusCode).toBe(200);
      await setAccess(false);
      try {
        expect([(await me(auth)).statusCode, (await me(auth)).json()]).toEqual([401, { error: "Couldn't authenticate you" }]);
        expect((await get('/api/v2/api_tokens', admin.basic)).statusCode).toBe(200);
        const made = await newToken('made while off');
        expect((await me(tokenBasic(admin.email, made.token))).statusCode).toBe(401);
        expect((await del(`/api/v2/api_tokens/${made.id}`, admin.basic)).statusCode).toBe(204);
        const settings = await ctx.graphql('{ accountSettings { apiTokenAccess } }', {}, { authorization: admin.basic });
        expect(settings.json().data.accountSettings.apiTokenAccess).toBe(false);
        expect((await auditOf(ctx, 'account', account)).at(-1)!.changed_fields).toEqual(['api_token_access']);
      } finally {
        await setAccess(true);
      }
      expect((await me(auth)).statusCode).toBe(200);
      await del(`/api/v2/api_tokens/${id}`, admin.basic);
    });

    it('is not a previous password: changing one\'s own password with a token as previous_password fails', async () => {
      const { id, token } = await newToken('not a password');
      const res = await ctx.inject({
        method: 'PUT', url: `/api/v2/users/${agent.id}/password`, headers: { ...json, authorization: tokenBasic(agent.email, token) },
        payload: { password: 'a-brand-new-password', previous_password: token },
      });
      expect(res.statusCode).toBe(422);
      expect((await me(agent.basic)).statusCode).toBe(200);
      await del(`/api/v2/api_tokens/${id}`, admin.basic);
    });
  });
});

describe('API token sign-ins are throttled like passwords (docs/api.md, "API tokens")', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let victim: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin', { password: 'the-right-password' });
    victim = await ctx.createUser(account, 'agent', { password: 'the-right-password' });
  });
  afterAll(() => ctx.close());

  it('counts wrong tokens and wrong passwords together: the 11th attempt is 429, even with the right token, exactly like a password', async () => {
    const res = await ctx.inject({ method: 'POST', url: '/api/v2/api_tokens', headers: { 'content-type': 'application/json', authorization: admin.basic }, payload: { api_token: { description: 'x' } } });
    const token = res.json().api_token.token as string;
    const me = (authorization: string) => ctx.inject({ method: 'GET', url: '/api/v2/users/me', headers: { authorization } });
    const wrong: string[] = [];
    for (let i = 0; i < 5; i++) wrong.push(basicHeader(victim.email, `wrong-password-${i}`), tokenBasic(victim.email, `wrong-token-${i}-0123456789012345678901`));
    for (const authorization of wrong) {
      const before = kdfRuns();
      const r = await me(authorization);
      expect([r.statusCode, r.json(), kdfRuns() - before]).toEqual([401, { error: "Couldn't authenticate you" }, 1]);
    }
    const byToken = await me(tokenBasic(victim.email, token));
    const byPassword = await me(victim.basic);
    expect(byToken.statusCode).toBe(429);
    expect([byToken.json(), byToken.headers['retry-after'] !== undefined]).toEqual([byPassword.json(), true]);
    expect(byPassword.statusCode).toBe(429);
    // another user of the account is not throttled, and signs in with the token
    expect((await me(tokenBasic(admin.email, token))).statusCode).toBe(200);
  });
});
