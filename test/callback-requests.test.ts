import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

const PATH = '/api/v2/channels/voice/callback_requests';
const CREATE = `mutation ($input: CallbackRequestInput!) {
  createCallbackRequest(input: $input) {
    id phoneNumberId requesterPhoneNumber requestedGroupIds routedGroupIds status queuePosition createdById createdAt
    rateLimit { limit remaining }
  }
}`;
const LIST = `query ($phoneNumberId: ID, $status: CallbackRequestStatus, $first: Int, $after: String) {
  callbackRequests(phoneNumberId: $phoneNumberId, status: $status, first: $first, after: $after) {
    edges { cursor node { id phoneNumberId status queuePosition } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    totalCount
  }
}`;

interface Tenant {
  accountId: bigint;
  agent: TestUser;
  admin: TestUser;
  endUser: TestUser;
  phones: bigint[];
  groups: bigint[];
}

let numbers = 0;

async function tenant(ctx: TestContext, omnichannelRouting = false): Promise<Tenant> {
  const accountId = await ctx.createAccount(undefined, omnichannelRouting);
  const [agent, admin, endUser] = await Promise.all([
    ctx.createUser(accountId, 'agent'),
    ctx.createUser(accountId, 'admin'),
    ctx.createUser(accountId, 'end_user'),
  ]);
  const phones = [];
  for (let i = 0; i < 2; i++) {
    const n = await ctx.db.prisma.voicePhoneNumber.create({ data: { accountId, number: `+1251871${String(7000 + ++numbers).padStart(4, '0')}` } });
    phones.push(n.id);
  }
  const groups = [];
  for (const name of ['support', 'sales', 'billing']) groups.push((await ctx.db.prisma.group.create({ data: { accountId, name } })).id);
  return { accountId, agent, admin, endUser, phones, groups };
}

function post(ctx: TestContext, user: TestUser | null, body: unknown, path = PATH) {
  return ctx.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/json', ...(user ? { authorization: user.basic } : {}) },
    payload: JSON.stringify(body),
  });
}

const stored = (ctx: TestContext, accountId: bigint) => ctx.db.prisma.callbackRequest.findMany({ where: { accountId }, orderBy: { id: 'asc' } });
// the account's hits in its callback window (rate_window_take's key '<bucket>:<account id>')
const hits = (ctx: TestContext, accountId: bigint) => ctx.db.prisma.rateWindowHit.count({ where: { key: `callback_requests:${accountId}` } });

describe('voice callback requests (docs/api.md, "Voice callback requests")', () => {
  let ctx: TestContext;
  let t: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    ctx = await createTestApp();
    t = await tenant(ctx);
    other = await tenant(ctx);
  });
  afterAll(() => ctx.close());

  describe('creation', () => {
    it('creates over REST: 201, empty body, the budget in headers, the row stored normalized', async () => {
      const res = await post(ctx, t.agent, {
        callback_request: { phone_number_id: Number(t.phones[0]), requester_phone_number: ' +12518717081 ', group_ids: [Number(t.groups[1]), Number(t.groups[0])], status: 'completed' },
      });
      expect(res.statusCode).toBe(201);
      expect(res.body).toBe('');
      expect(res.headers['x-rate-limit']).toBe('30');
      expect(res.headers['x-rate-limit-remaining']).toBe('29');
      const [row] = await stored(ctx, t.accountId);
      expect(row).toMatchObject({
        phoneNumberId: t.phones[0],
        requesterPhoneNumber: '+12518717081',
        requestedGroupIds: [t.groups[1], t.groups[0]],
        routedGroupIds: [t.groups[1], t.groups[0]],
        status: 'queued',
        createdById: t.agent.id,
      });
    });

    it('costs 2 SQL statements with no agent free: the Bearer lookup, and one for validation + window + insert + queue position + whether an agent is free', async () => {
      const own = await tenant(ctx); // its own budget and queue, so that the other tests' figures stay as they are
      const { token } = await insertToken(ctx, own.agent, { scopes: ['write'] });
      const send = () =>
        ctx.inject({
          method: 'POST',
          url: PATH,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          payload: { callback_request: { phone_number_id: Number(own.phones[0]), requester_phone_number: '+12518717082', group_ids: [Number(own.groups[0])] } },
        });
      let before = ctx.db.statementCount();
      expect((await send()).statusCode).toBe(201); // the token's first use writes used_at in the lookup statement
      expect(ctx.db.statementCount() - before).toBe(2);
      before = ctx.db.statementCount();
      expect((await send()).statusCode).toBe(201);
      expect(ctx.db.statementCount() - before).toBe(2);
    });

    it('accepts the .json suffix and a request without groups', async () => {
      const res = await post(ctx, t.agent, { callback_request: { phone_number_id: Number(t.phones[1]), requester_phone_number: '+442079460958' } }, `${PATH}.json`);
      expect(res.statusCode).toBe(201);
      const rows = await stored(ctx, t.accountId);
      expect(rows.at(-1)).toMatchObject({ phoneNumberId: t.phones[1], requestedGroupIds: [], routedGroupIds: [] });
    });

    it('creates over GraphQL and returns the request', async () => {
      const res = await ctx.graphql(CREATE, { input: { phoneNumberId: String(t.phones[0]), requesterPhoneNumber: '+4915123456789', groupIds: [String(t.groups[2])] } }, { authorization: t.admin.basic });
      const created = res.json().data.createCallbackRequest;
      expect(created).toMatchObject({
        phoneNumberId: String(t.phones[0]),
        requesterPhoneNumber: '+4915123456789',
        requestedGroupIds: [String(t.groups[2])],
        routedGroupIds: [String(t.groups[2])],
        status: 'QUEUED',
        queuePosition: 2, // the REST one above is first on this number
        createdById: String(t.admin.id),
        rateLimit: { limit: 30, remaining: 27 },
      });
      expect(created.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
      expect(await ctx.db.prisma.callbackRequest.findUnique({ where: { id: BigInt(created.id) } })).toMatchObject({ createdById: t.admin.id });
    });

    it.each([
      [false, 'all groups'],
      [true, 'the first group only'],
    ])('routes with omnichannel routing %s to %s, storing what was asked', async (omnichannel) => {
      const x = await tenant(ctx, omnichannel);
      const groupIds = [x.groups[2], x.groups[0]].map(String);
      const res = await ctx.graphql(CREATE, { input: { phoneNumberId: String(x.phones[0]), requesterPhoneNumber: '+12518717081', groupIds } }, { authorization: x.agent.basic });
      expect(res.json().data.createCallbackRequest).toMatchObject({ requestedGroupIds: groupIds, routedGroupIds: omnichannel ? groupIds.slice(0, 1) : groupIds });
      const [row] = await stored(ctx, x.accountId);
      expect(row.routedGroupIds).toEqual(omnichannel ? [x.groups[2]] : [x.groups[2], x.groups[0]]);
    });
  });

  describe('validation: 422, nothing stored, nothing spent', () => {
    let v: Tenant;
    beforeAll(async () => {
      v = await tenant(ctx);
    });
    afterEach(async () => {
      expect(await stored(ctx, v.accountId)).toHaveLength(0);
      expect(await hits(ctx, v.accountId)).toBe(0);
    });

    const good = () => ({ phone_number_id: Number(v.phones[0]), requester_phone_number: '+12518717081' });
    it.each<[string, () => Record<string, unknown>, string, string]>([
      ['phone_number_id missing', () => ({ requester_phone_number: '+12518717081' }), 'phone_number_id', 'BlankValue'],
      ['phone_number_id null', () => ({ ...good(), phone_number_id: null }), 'phone_number_id', 'BlankValue'],
      ['phone_number_id as a string', () => ({ ...good(), phone_number_id: String(v.phones[0]) }), 'phone_number_id', 'InvalidValue'],
      ['an unknown phone number', () => ({ ...good(), phone_number_id: 987654 }), 'phone_number_id', 'NotFound'],
      ["another account's phone number", () => ({ ...good(), phone_number_id: Number(other.phones[0]) }), 'phone_number_id', 'NotFound'],
      ['requester_phone_number missing', () => ({ phone_number_id: Number(v.phones[0]) }), 'requester_phone_number', 'BlankValue'],
      ['requester_phone_number empty', () => ({ ...good(), requester_phone_number: '' }), 'requester_phone_number', 'BlankValue'],
      ['"+1"', () => ({ ...good(), requester_phone_number: '+1' }), 'requester_phone_number', 'InvalidValue'],
      ['a number without +', () => ({ ...good(), requester_phone_number: '12518717081' }), 'requester_phone_number', 'InvalidValue'],
      ['letters', () => ({ ...good(), requester_phone_number: '+1251abc7081' }), 'requester_phone_number', 'InvalidValue'],
      ['a number valid in form but not for its country', () => ({ ...good(), requester_phone_number: '+15550100000' }), 'requester_phone_number', 'InvalidValue'],
      ['a number too long', () => ({ ...good(), requester_phone_number: '+1251871708112345' }), 'requester_phone_number', 'InvalidValue'],
      ['a number that is not a string', () => ({ ...good(), requester_phone_number: 12518717081 }), 'requester_phone_number', 'InvalidValue'],
      ['an unknown group', () => ({ ...good(), group_ids: [Number(v.groups[0]), 987654] }), 'group_ids', 'NotFound'],
      ["another account's group", () => ({ ...good(), group_ids: [Number(other.groups[0])] }), 'group_ids', 'NotFound'],
      ['group_ids not an array', () => ({ ...good(), group_ids: Number(v.groups[0]) }), 'group_ids', 'InvalidValue'],
      ['group_ids holding strings', () => ({ ...good(), group_ids: [String(v.groups[0])] }), 'group_ids', 'InvalidValue'],
    ])('refuses %s', async (_name, body, field, code) => {
      const res = await post(ctx, v.agent, { callback_request: body() });
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const json = res.json();
      expect(json).toMatchObject({ error: 'RecordInvalid', description: 'Record validation errors' });
      expect(json.details[field]).toEqual([expect.objectContaining({ error: code, description: expect.any(String) })]);
    });

    it('reports every missing field at once, also for an empty body', async () => {
      for (const body of [{ callback_request: {} }, {}]) {
        const res = await post(ctx, v.agent, body);
        expect(res.statusCode).toBe(422);
        expect(res.json().details).toEqual({
          phone_number_id: [{ error: 'BlankValue', description: 'Phone number: cannot be blank' }],
          requester_phone_number: [{ error: 'BlankValue', description: 'Requester phone number: cannot be blank' }],
        });
      }
    });

    it('answers GraphQL with BAD_USER_INPUT and the same details', async () => {
      const res = await ctx.graphql(
        CREATE,
        { input: { phoneNumberId: String(other.phones[0]), requesterPhoneNumber: '12518717081', groupIds: ['987654'] } },
        { authorization: v.agent.basic },
      );
      const [error] = res.json().errors;
      expect(error.extensions.code).toBe('BAD_USER_INPUT');
      expect(Object.fromEntries(Object.entries(error.extensions.details).map(([k, d]) => [k, (d as { error: string }[])[0].error]))).toEqual({
        phone_number_id: 'NotFound',
        requester_phone_number: 'InvalidValue',
        group_ids: 'NotFound',
      });
    });
  });

  describe('roles', () => {
    const body = () => ({ callback_request: { phone_number_id: Number(t.phones[0]), requester_phone_number: '+12518717081' } });

    it('lets an admin create (admins are agents)', async () => {
      expect((await post(ctx, t.admin, body())).statusCode).toBe(201);
    });

    it('refuses an end user with 403, on both APIs', async () => {
      const res = await post(ctx, t.endUser, body());
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Forbidden', description: 'You do not have access to this resource' });
      const gql = await ctx.graphql(CREATE, { input: { phoneNumberId: String(t.phones[0]), requesterPhoneNumber: '+12518717081' } }, { authorization: t.endUser.basic });
      expect(gql.json().errors[0].extensions.code).toBe('FORBIDDEN');
      expect((await ctx.graphql(LIST, {}, { authorization: t.endUser.basic })).json().errors[0].extensions.code).toBe('FORBIDDEN');
    });

    it('refuses a request without credentials with 401', async () => {
      const res = await post(ctx, null, body());
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: "Couldn't authenticate you" });
    });

    it('answers 401/403 before looking at the body, so a stranger learns nothing of the rules', async () => {
      const mistyped = { callback_request: { phone_number_id: 'five', group_ids: 'x' } };
      expect((await post(ctx, t.endUser, mistyped)).statusCode).toBe(403);
      expect((await post(ctx, null, mistyped)).statusCode).toBe(401);
    });

    it('refuses a read-only token with 403', async () => {
      const { token } = await insertToken(ctx, t.agent, { scopes: ['read'] });
      const res = await ctx.inject({ method: 'POST', url: PATH, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, payload: body() });
      expect(res.statusCode).toBe(403);
    });
  });

  describe('the queue view', () => {
    it('gives queued requests their place in their phone number queue, and pages', async () => {
      const q = await tenant(ctx);
      const [a, b] = q.phones.map(String);
      const ids: string[] = [];
      for (const phone of [a, b, a, a, b]) {
        const res = await ctx.graphql(CREATE, { input: { phoneNumberId: phone, requesterPhoneNumber: '+12518717081' } }, { authorization: q.agent.basic });
        ids.push(res.json().data.createCallbackRequest.id);
      }
      const list = async (vars: Record<string, unknown> = {}) => (await ctx.graphql(LIST, vars, { authorization: q.agent.basic })).json().data.callbackRequests;
      const positions = async (vars: Record<string, unknown> = {}) => (await list(vars)).edges.map((e: { node: { queuePosition: number | null } }) => e.node.queuePosition);
      expect(await positions()).toEqual([1, 1, 2, 3, 2]);

      await ctx.db.prisma.callbackRequest.update({ where: { id: BigInt(ids[0]) }, data: { status: 'completed' } });
      expect(await positions()).toEqual([null, 1, 1, 2, 2]);
      expect(await positions({ phoneNumberId: a })).toEqual([null, 1, 2]);
      expect(await positions({ status: 'QUEUED' })).toEqual([1, 1, 2, 2]);
      expect((await list({ phoneNumberId: String(other.phones[0]) })).totalCount).toBe(0);

      const first = await list({ first: 2 });
      expect(first.totalCount).toBe(5);
      expect(first.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(ids.slice(0, 2));
      expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, endCursor: first.edges[1].cursor });
      const rest = await list({ first: 2, after: first.pageInfo.endCursor });
      expect(rest.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(ids.slice(2, 4));
      // a later page counts the whole queue ahead of its rows, not the page
      expect(rest.edges.map((e: { node: { queuePosition: number | null } }) => e.node.queuePosition)).toEqual([1, 2]);
      const last = await list({ first: 2, after: rest.pageInfo.endCursor });
      expect(last.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(ids.slice(4));
      expect(last.edges.map((e: { node: { queuePosition: number | null } }) => e.node.queuePosition)).toEqual([2]);
      expect(last.pageInfo.hasNextPage).toBe(false);
    });

    it('refuses a tampered cursor and a page size below 1', async () => {
      for (const vars of [{ after: 'bm90LWEtY3Vyc29y' }, { first: 0 }]) {
        const res = await ctx.graphql(LIST, vars, { authorization: t.agent.basic });
        expect(res.json().errors[0].extensions.code).toBe('BAD_REQUEST');
      }
    });
  });

  describe('the rate limit: 30 per account per rolling window', () => {
    it('counts down, then answers 429 on both APIs; failures cost nothing; other accounts go on', async () => {
      const r = await tenant(ctx);
      const body = { callback_request: { phone_number_id: Number(r.phones[0]), requester_phone_number: '+12518717081' } };
      // GraphQL and REST share one budget.
      for (let i = 0; i < 5; i++) {
        const res = await ctx.graphql(CREATE, { input: { phoneNumberId: String(r.phones[1]), requesterPhoneNumber: '+12518717081' } }, { authorization: r.agent.basic });
        expect(res.json().data.createCallbackRequest.rateLimit).toEqual({ limit: 30, remaining: 29 - i });
      }
      const remaining: string[] = [];
      for (let i = 5; i < 30; i++) {
        if (i === 10) {
          // failed requests in the middle do not spend the budget
          expect((await post(ctx, r.agent, { callback_request: { ...body.callback_request, requester_phone_number: '+1' } })).statusCode).toBe(422);
          expect((await post(ctx, r.endUser, body)).statusCode).toBe(403);
        }
        const res = await post(ctx, r.agent, body);
        expect(res.statusCode).toBe(201);
        expect(res.headers['x-rate-limit']).toBe('30');
        remaining.push(res.headers['x-rate-limit-remaining'] as string);
      }
      expect(remaining).toEqual(Array.from({ length: 25 }, (_, i) => String(24 - i)));

      const limited = await post(ctx, r.agent, body);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ error: 'TooManyRequests', description: expect.any(String) });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(600);
      expect(limited.headers['x-rate-limit']).toBe('30');
      expect(limited.headers['x-rate-limit-remaining']).toBe('0');

      const gql = await ctx.graphql(CREATE, { input: { phoneNumberId: String(r.phones[0]), requesterPhoneNumber: '+12518717081' } }, { authorization: r.admin.basic });
      expect(gql.json().errors[0].extensions).toEqual({ code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
      expect(gql.json().errors[0].extensions.retryAfter).toBeGreaterThanOrEqual(1);
      expect(await stored(ctx, r.accountId)).toHaveLength(30);

      const elsewhere = await post(ctx, other.agent, { callback_request: { phone_number_id: Number(other.phones[0]), requester_phone_number: '+12518717081' } });
      expect(elsewhere.statusCode).toBe(201);
    });

    it('lets exactly 30 of 100 concurrent requests through', async () => {
      const c = await tenant(ctx);
      const body = { callback_request: { phone_number_id: Number(c.phones[0]), requester_phone_number: '+12518717081' } };
      await ctx.graphql('{ me { id } }', {}, { authorization: c.agent.basic }); // warms the Basic cache
      const responses = await Promise.all(Array.from({ length: 100 }, () => post(ctx, c.agent, body)));
      const statuses = responses.map((r) => r.statusCode);
      expect(statuses.filter((s) => s === 201)).toHaveLength(30);
      expect(statuses.filter((s) => s === 429)).toHaveLength(70);
      const left = responses.filter((r) => r.statusCode === 201).map((r) => Number(r.headers['x-rate-limit-remaining']));
      expect(left.sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      expect(await stored(ctx, c.accountId)).toHaveLength(30);
      expect(await hits(ctx, c.accountId)).toBe(30);
    });
  });
});

describe('the rolling window', () => {
  let ctx: TestContext;
  // A 5 s window and a budget of 3, so that filling it never outlasts the window, even on a loaded
  // machine (with 2 s, a CI run under load saw the first request leave the window before the third came).
  const WINDOW = 5;
  beforeAll(async () => {
    ctx = await createTestApp({ limits: { callbackRequests: 3, callbackWindowSeconds: WINDOW } });
  });
  afterAll(() => ctx.close());

  it('frees a slot once the oldest counted request leaves the window', async () => {
    const w = await tenant(ctx);
    const body = { callback_request: { phone_number_id: Number(w.phones[0]), requester_phone_number: '+12518717081' } };
    await ctx.graphql('{ me { id } }', {}, { authorization: w.agent.basic }); // warms the Basic cache: no KDF inside the window
    const left: string[] = [];
    for (let i = 0; i < 3; i++) left.push((await post(ctx, w.agent, body)).headers['x-rate-limit-remaining'] as string);
    expect(left).toEqual(['2', '1', '0']);
    const limited = await post(ctx, w.agent, body);
    expect(limited.statusCode).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    const again = await post(ctx, w.agent, body);
    expect(again.statusCode).toBe(201);
    expect(again.headers['x-rate-limit']).toBe('3');
  });
});
