import { auditOf } from './helpers/audit';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

/** The callback lifecycle's settings, untouched here (test/callback-lifecycle.test.ts changes them). */
const LIFECYCLE_DEFAULTS = { callback_offer_timeout: 30, callback_retry_delay: 120, callback_max_attempts: 3, wrap_up_time: 0, api_token_access: true };

// docs/api.md, "Account settings": admins read and change the account's omnichannel routing.

const json = { 'content-type': 'application/json' };

describe('account settings (docs/api.md, "Account settings")', () => {
  let ctx: TestContext;
  let account: bigint;
  let admin: TestUser;
  let agent: TestUser;
  let other: { account: bigint; admin: TestUser };

  beforeAll(async () => {
    ctx = await createTestApp();
    account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    const otherAccount = await ctx.createAccount(undefined, true);
    other = { account: otherAccount, admin: await ctx.createUser(otherAccount, 'admin') };
  });
  afterAll(() => ctx.close());

  const get = (authorization: string) => ctx.inject({ method: 'GET', url: '/api/v2/account/settings.json', headers: { authorization } });
  const put = (authorization: string, payload: unknown) =>
    ctx.inject({ method: 'PUT', url: '/api/v2/account/settings', headers: { ...json, authorization }, payload: payload as object });

  it('GET shows the account\'s own settings', async () => {
    expect((await get(admin.basic)).json()).toEqual({ settings: { omnichannel_routing: false, ...LIFECYCLE_DEFAULTS } });
    expect((await get(other.admin.basic)).json()).toEqual({ settings: { omnichannel_routing: true, ...LIFECYCLE_DEFAULTS } });
  });

  it('PUT changes them (same shape in and out), for the account only, with an audit record; no change writes nothing', async () => {
    const res = await put(admin.basic, { settings: { omnichannel_routing: true, unknown: 1 } });
    expect([res.statusCode, res.json()]).toEqual([200, { settings: { omnichannel_routing: true, ...LIFECYCLE_DEFAULTS } }]);
    expect((await get(admin.basic)).json().settings.omnichannel_routing).toBe(true);
    expect((await ctx.db.prisma.account.findUniqueOrThrow({ where: { id: account } })).updatedAt).not.toBeNull();
    expect((await ctx.db.prisma.account.findUniqueOrThrow({ where: { id: other.account } })).omnichannelRouting).toBe(true);
    const [audit] = await auditOf(ctx, 'account', account);
    expect(audit).toMatchObject({
      action: 'update', changed_fields: ['omnichannel_routing'], actor_id: String(admin.id), request_id: res.headers['x-request-id'], account_id: String(account),
      change_description: 'Omnichannel routing turned on',
    });
    expect((await put(admin.basic, { settings: { omnichannel_routing: true } })).statusCode).toBe(200);
    expect(await auditOf(ctx, 'account', account)).toHaveLength(1);
    expect((await put(admin.basic, { settings: {} })).json()).toEqual({ settings: { omnichannel_routing: true, ...LIFECYCLE_DEFAULTS } });
  });

  it('routing follows the setting: with it off, a callback request routes to every group', async () => {
    await put(admin.basic, { settings: { omnichannel_routing: false } });
    const phone = await ctx.db.prisma.voicePhoneNumber.create({ data: { accountId: account, number: '+14155552671' } });
    const groups = await Promise.all(['A', 'B'].map((name) => ctx.db.prisma.group.create({ data: { accountId: account, name } })));
    const res = await ctx.inject({
      method: 'POST', url: '/api/v2/channels/voice/callback_requests', headers: { ...json, authorization: agent.basic },
      payload: { phone_number_id: Number(phone.id), requester_phone_number: '+14155552672', group_ids: groups.map((g) => Number(g.id)) },
    });
    expect(res.statusCode).toBe(201);
    const stored = await ctx.db.prisma.callbackRequest.findFirstOrThrow({ where: { phoneNumberId: phone.id } });
    expect(stored.routedGroupIds).toEqual(groups.map((g) => g.id));
  });

  it('admins only: agents 403, read-only tokens cannot write, bad values 422', async () => {
    expect((await get(agent.basic)).statusCode).toBe(403);
    expect((await put(agent.basic, { settings: { omnichannel_routing: true } })).statusCode).toBe(403);
    const readOnly = await insertToken(ctx, admin, { scopes: ['read'] });
    expect((await get(`Bearer ${readOnly.token}`)).statusCode).toBe(200);
    expect((await put(`Bearer ${readOnly.token}`, { settings: { omnichannel_routing: true } })).statusCode).toBe(403);
    for (const value of ['yes', 1, null, [true], {}]) {
      const res = await put(admin.basic, { settings: { omnichannel_routing: value } });
      expect([res.statusCode, res.json().details]).toEqual([422, { omnichannel_routing: [{ error: 'InvalidValue', description: 'Omnichannel routing: must be true or false' }] }]);
    }
    expect((await ctx.inject({ method: 'PUT', url: '/api/v2/account/settings', headers: { ...json, authorization: admin.basic }, payload: '"x"' })).statusCode).toBe(400);
  });

  it('GraphQL accountSettings and updateAccountSettings', async () => {
    const gql = (who: TestUser, query: string) => ctx.graphql(query, {}, { authorization: who.basic });
    const res = await gql(admin, 'mutation { updateAccountSettings(input: { omnichannelRouting: true }) { omnichannelRouting updatedAt } }');
    expect(res.json().data.updateAccountSettings).toEqual({ omnichannelRouting: true, updatedAt: expect.any(String) });
    expect((await gql(admin, '{ accountSettings { omnichannelRouting } }')).json().data.accountSettings).toEqual({ omnichannelRouting: true });
    expect((await gql(agent, '{ accountSettings { omnichannelRouting } }')).json().errors[0].extensions.code).toBe('FORBIDDEN');
    const invalid = await gql(admin, 'mutation { updateAccountSettings(input: { omnichannelRouting: null }) { omnichannelRouting } }');
    expect(invalid.json().errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { omnichannel_routing: expect.any(Array) } });
    expect((await auditOf(ctx, 'account', account)).at(-1)).toMatchObject({ via: 'graphql', changed_fields: ['omnichannel_routing'] });
  });
});
