import type { LightMyRequestResponse } from 'fastify';
import { auditOf } from './helpers/audit';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Groups": agents and admins read them, admins write them, over REST and GraphQL.

const json = { 'content-type': 'application/json' };
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('groups (docs/api.md, "Groups")', () => {
  let ctx: TestContext;
  let account: bigint;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let otherAdmin: TestUser;

  beforeAll(async () => {
    ctx = await createTestApp();
    account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    otherAdmin = await ctx.createUser(await ctx.createAccount(), 'admin');
  });
  afterAll(() => ctx.close());

  const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, authorization: string, payload?: unknown): Promise<LightMyRequestResponse> =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: payload === undefined ? { authorization } : { ...json, authorization }, payload: payload as object });
  const create = async (name: string, who: TestUser = admin, description?: string) => {
    const res = await send('POST', '/groups', who.basic, { group: { name, ...(description === undefined ? {} : { description }) } });
    expect(res.statusCode).toBe(201);
    return res.json().group as { id: number; name: string; description: string; url: string };
  };

  it('POST creates a group: 201, Location, Zendesk\'s fields, and an audit record of the request', async () => {
    const res = await send('POST', '/groups.json', admin.basic, { group: { name: ' Support ', description: 'First line', id: 5, url: 'x' } });
    expect(res.statusCode).toBe(201);
    const group = res.json().group;
    expect(group).toEqual({
      id: expect.any(Number), url: `http://localhost:80/api/v2/groups/${group.id}.json`, name: 'Support', description: 'First line',
      created_at: expect.stringMatching(ISO), updated_at: null,
    });
    expect(res.headers.location).toBe(group.url);
    expect(await auditOf(ctx, 'group', group.id)).toEqual([
      expect.objectContaining({
        action: 'create', source_label: 'Support', changed_fields: ['name', 'description'], actor_id: String(admin.id), via: 'api', request_id: res.headers['x-request-id'],
      }),
    ]);
    const flat = await send('POST', '/groups', admin.basic, { name: 'Flat' });
    expect(flat.json().group).toMatchObject({ name: 'Flat', description: '' });
  });

  it('agents and admins read (list and show); end users, read-only writers and other accounts do not', async () => {
    const group = await create('Readable');
    for (const who of [admin, agent]) {
      expect((await send('GET', `/groups/${group.id}`, who.basic)).json()).toEqual({ group: expect.objectContaining({ id: group.id, name: 'Readable' }) });
      expect((await send('GET', '/groups', who.basic)).json().groups.map((g: { id: number }) => g.id)).toContain(group.id);
    }
    expect((await send('GET', '/groups', endUser.basic)).statusCode).toBe(403);
    expect((await send('GET', `/groups/${group.id}`, endUser.basic)).statusCode).toBe(403);
    expect((await send('POST', '/groups', agent.basic, { name: 'x' })).statusCode).toBe(403);
    expect((await send('PUT', `/groups/${group.id}`, agent.basic, { name: 'x' })).statusCode).toBe(403);
    expect((await send('DELETE', `/groups/${group.id}`, agent.basic)).statusCode).toBe(403);
    const readOnly = await insertToken(ctx, admin, { scopes: ['read'] });
    expect((await send('GET', '/groups', `Bearer ${readOnly.token}`)).statusCode).toBe(200);
    expect((await send('POST', '/groups', `Bearer ${readOnly.token}`, { name: 'x' })).statusCode).toBe(403);
    const other = await send('GET', `/groups/${group.id}`, otherAdmin.basic);
    expect([other.statusCode, other.json()]).toEqual([404, { error: 'RecordNotFound', description: 'Not found' }]);
    expect((await send('PUT', `/groups/${group.id}`, otherAdmin.basic, { name: 'stolen' })).statusCode).toBe(404);
    expect((await send('DELETE', `/groups/${group.id}`, otherAdmin.basic)).statusCode).toBe(404);
    for (const id of ['0', 'abc', '-3', '1e3']) expect((await send('GET', `/groups/${id}`, admin.basic)).statusCode).toBe(404);
  });

  it('lists with offset pagination: next_page, previous_page, count (per_page at most 100)', async () => {
    const own = await ctx.createAccount();
    const owner = await ctx.createUser(own, 'admin');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(`G${i}`, owner)).id);
    const page = (await send('GET', '/groups?page=2&per_page=2', owner.basic)).json();
    expect(page).toEqual({
      groups: [expect.objectContaining({ id: ids[2] }), expect.objectContaining({ id: ids[3] })],
      next_page: 'http://localhost/api/v2/groups?page=3&per_page=2',
      previous_page: 'http://localhost/api/v2/groups?page=1&per_page=2',
      count: 5,
    });
    const all = (await send('GET', '/groups.json?per_page=500', owner.basic)).json();
    expect([all.groups.length, all.next_page, all.previous_page, all.count]).toEqual([5, null, null, 5]);
    for (const q of ['page=0', 'per_page=0', 'page=x', 'page=101&per_page=100']) {
      const res = await send('GET', `/groups?${q}`, owner.basic);
      expect([q, res.statusCode, res.json().error]).toEqual([q, 400, 'InvalidRequest']);
    }
  });

  it('PUT changes the given fields and audits them; DELETE removes it (204) and callback requests keep the ids they asked for', async () => {
    const group = await create('Old name', admin, 'desc');
    const res = await send('PUT', `/groups/${group.id}.json`, admin.basic, { group: { name: 'New name', description: 'desc' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().group).toMatchObject({ name: 'New name', description: 'desc', updated_at: expect.stringMatching(ISO) });
    const cleared = await send('PUT', `/groups/${group.id}`, admin.basic, { description: null });
    expect(cleared.json().group.description).toBe('');

    const phone = await ctx.db.prisma.voicePhoneNumber.create({ data: { accountId: account, number: '+14155552671' } });
    const callback = await send('POST', '/channels/voice/callback_requests', agent.basic, {
      callback_request: { phone_number_id: Number(phone.id), requester_phone_number: '+14155552672', group_ids: [group.id] },
    });
    expect(callback.statusCode).toBe(201);
    const deleted = await send('DELETE', `/groups/${group.id}`, admin.basic);
    expect([deleted.statusCode, deleted.body]).toEqual([204, '']);
    expect((await send('GET', `/groups/${group.id}`, admin.basic)).statusCode).toBe(404);
    expect((await send('DELETE', `/groups/${group.id}`, admin.basic)).statusCode).toBe(404);
    const stored = await ctx.db.prisma.callbackRequest.findFirstOrThrow({ where: { phoneNumberId: phone.id } });
    expect(stored.requestedGroupIds).toEqual([BigInt(group.id)]);
    // a deleted group is no group of the account any more
    const refused = await send('POST', '/channels/voice/callback_requests', agent.basic, {
      callback_request: { phone_number_id: Number(phone.id), requester_phone_number: '+14155552673', group_ids: [group.id] },
    });
    expect(refused.statusCode).toBe(422);
    expect((await auditOf(ctx, 'group', group.id)).map((a) => [a.action, a.changed_fields, a.source_label])).toEqual([
      ['create', ['name', 'description'], 'Old name'],
      ['update', ['name'], 'New name'],
      ['update', ['description'], 'New name'],
      ['destroy', [], 'New name'],
    ]);
  });

  it.each([
    ['no name', {}, { name: [{ error: 'BlankValue', description: 'Name: cannot be blank' }] }],
    ['a blank name', { name: '  ' }, { name: [{ error: 'BlankValue', description: 'Name: cannot be blank' }] }],
    ['a long name', { name: 'g'.repeat(256) }, { name: [{ error: 'TooLong', description: 'Name: is too long (maximum is 255 characters)' }] }],
    ['a long description', { name: 'ok', description: 'd'.repeat(1001) }, { description: [{ error: 'TooLong', description: 'Description: is too long (maximum is 1000 characters)' }] }],
    ['a number for a name', { name: 7 }, { name: [{ error: 'InvalidValue', description: 'Name: must be a string' }] }],
    ['an array for a description', { name: 'ok', description: ['x'] }, { description: [{ error: 'InvalidValue', description: 'Description: must be a string' }] }],
    ['a NUL', { name: 'a\u0000' }, { name: [{ error: 'InvalidValue', description: 'Name: must not contain NUL characters' }] }],
  ])('refuses %s with 422, on create and update', async (_what, body, details) => {
    const res = await send('POST', '/groups', admin.basic, { group: body });
    expect([res.statusCode, res.json()]).toEqual([422, { error: 'RecordInvalid', description: 'Record validation errors', details }]);
    if ('name' in body) {
      const group = await create('Valid');
      const updated = await send('PUT', `/groups/${group.id}`, admin.basic, body);
      expect([updated.statusCode, updated.json().details]).toEqual([422, details]);
    }
  });

  it('answers 400 to a body that is not a JSON object', async () => {
    const res = await ctx.inject({ method: 'POST', url: '/api/v2/groups', headers: { ...json, authorization: admin.basic }, payload: '["x"]' });
    expect(res.statusCode).toBe(400);
  });

  describe('GraphQL', () => {
    const gql = (who: TestUser, query: string, variables?: Record<string, unknown>) => ctx.graphql(query, variables, { authorization: who.basic });

    it('groups keeps its shape (a list), with page/perPage, and groupCount gives the total', async () => {
      const own = await ctx.createAccount();
      const owner = await ctx.createUser(own, 'admin');
      for (const name of ['A', 'B', 'C']) await create(name, owner);
      const res = await gql(owner, '{ all: groups { name } page: groups(page: 2, perPage: 2) { name description url updatedAt } groupCount }');
      expect(res.json().data).toEqual({
        all: [{ name: 'A' }, { name: 'B' }, { name: 'C' }],
        page: [{ name: 'C', description: '', url: expect.stringMatching(/\/api\/v2\/groups\/\d+\.json$/), updatedAt: null }],
        groupCount: 3,
      });
      const bad = await gql(owner, '{ groups(page: 0) { id } }');
      expect(bad.json().errors[0].extensions.code).toBe('BAD_REQUEST');
    });

    it('group(id), createGroup, updateGroup, deleteGroup; another account\'s id is null or NOT_FOUND', async () => {
      const created = (await gql(admin, 'mutation { createGroup(input: { name: "Gql", description: "d" }) { id name description } }')).json().data.createGroup;
      expect(created).toMatchObject({ name: 'Gql', description: 'd' });
      expect((await gql(agent, 'query($id: ID!) { group(id: $id) { name } }', { id: created.id })).json().data.group).toEqual({ name: 'Gql' });
      expect((await gql(otherAdmin, 'query($id: ID!) { group(id: $id) { name } }', { id: created.id })).json().data.group).toBeNull();
      const foreign = await gql(otherAdmin, 'mutation($id: ID!) { updateGroup(id: $id, input: { name: "x" }) { id } }', { id: created.id });
      expect(foreign.json().errors[0].extensions.code).toBe('NOT_FOUND');
      const updated = await gql(admin, 'mutation($id: ID!) { updateGroup(id: $id, input: { name: "Gql 2" }) { name } }', { id: created.id });
      expect(updated.json().data.updateGroup).toEqual({ name: 'Gql 2' });
      expect((await gql(agent, 'mutation($id: ID!) { deleteGroup(id: $id) }', { id: created.id })).json().errors[0].extensions.code).toBe('FORBIDDEN');
      expect((await gql(admin, 'mutation($id: ID!) { deleteGroup(id: $id) }', { id: created.id })).json().data.deleteGroup).toBe(true);
      expect((await auditOf(ctx, 'group', created.id)).map((a) => [a.action, a.via])).toEqual([
        ['create', 'graphql'],
        ['update', 'graphql'],
        ['destroy', 'graphql'],
      ]);
    });
  });
});
