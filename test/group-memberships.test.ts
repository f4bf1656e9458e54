import type { LightMyRequestResponse } from 'fastify';
import { auditOf } from './helpers/audit';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Group memberships": agents and admins read them, admins write them, over REST and GraphQL.

const json = { 'content-type': 'application/json' };
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

interface Membership {
  id: number;
  url: string;
  user_id: number;
  group_id: number;
  default: boolean;
  created_at: string;
  updated_at: string;
}

describe('group memberships (docs/api.md, "Group memberships")', () => {
  let ctx: TestContext;
  let account: bigint;
  let admin: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let otherAdmin: TestUser;
  let otherAgent: TestUser;
  let otherGroup: number;

  beforeAll(async () => {
    ctx = await createTestApp();
    account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    const other = await ctx.createAccount();
    otherAdmin = await ctx.createUser(other, 'admin');
    otherAgent = await ctx.createUser(other, 'agent');
    otherGroup = Number((await ctx.db.prisma.group.create({ data: { accountId: other, name: 'Theirs' } })).id);
  });
  afterAll(() => ctx.close());

  const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, authorization: string, payload?: unknown): Promise<LightMyRequestResponse> =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: payload === undefined ? { authorization } : { ...json, authorization }, payload: payload as object });
  const newGroup = async (name: string, who: TestUser = admin) => {
    const res = await send('POST', '/groups', who.basic, { group: { name } });
    expect(res.statusCode).toBe(201);
    return res.json().group.id as number;
  };
  const newAgent = async (accountId = account, role: 'agent' | 'admin' = 'agent') => ctx.createUser(accountId, role);
  const add = async (userId: bigint | number, groupId: number, who: TestUser = admin): Promise<Membership> => {
    const res = await send('POST', '/group_memberships', who.basic, { group_membership: { user_id: Number(userId), group_id: groupId } });
    expect([res.statusCode, res.body]).toEqual([201, expect.any(String)]);
    return res.json().group_membership;
  };
  const idsOf = (res: LightMyRequestResponse) => (res.json().group_memberships as Membership[]).map((m) => m.id);

  it("POST creates a membership: 201, Location, Zendesk's fields, the stored row and an audit record of the request", async () => {
    const group = await newGroup('Tier 1');
    const res = await send('POST', '/group_memberships.json', admin.basic, { group_membership: { user_id: Number(agent.id), group_id: group, id: 5, default: true } });
    expect(res.statusCode).toBe(201);
    const membership = res.json().group_membership;
    expect(membership).toEqual({
      id: expect.any(Number), url: `http://localhost:80/api/v2/group_memberships/${membership.id}.json`, user_id: Number(agent.id), group_id: group, default: false,
      created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO),
    });
    expect(res.headers.location).toBe(membership.url);
    const stored = await ctx.db.prisma.groupMembership.findUniqueOrThrow({ where: { id: BigInt(membership.id) } });
    expect(stored).toMatchObject({ accountId: account, userId: agent.id, groupId: BigInt(group) });
    const [record] = await auditOf(ctx, 'group_membership', membership.id);
    expect(record).toMatchObject({
      action: 'create', changed_fields: ['user_id', 'group_id'], actor_id: String(admin.id), via: 'api', request_id: res.headers['x-request-id'],
      source_label: expect.stringContaining('in Tier 1'),
    });
    // flat, and an admin may be a member too
    const flat = await send('POST', '/group_memberships', admin.basic, { user_id: Number(admin.id), group_id: group });
    expect([flat.statusCode, flat.json().group_membership.user_id]).toEqual([201, Number(admin.id)]);
  });

  it('refuses a membership that exists already with 422 InvalidValue, and stores nothing', async () => {
    const group = await newGroup('Twice');
    await add(agent.id, group);
    const res = await send('POST', '/group_memberships', admin.basic, { group_membership: { user_id: Number(agent.id), group_id: group } });
    expect([res.statusCode, res.json()]).toEqual([
      422,
      { error: 'RecordInvalid', description: 'Record validation errors', details: { user_id: [{ error: 'InvalidValue', description: 'User: is already a member of this group' }] } },
    ]);
    expect(await ctx.db.prisma.groupMembership.count({ where: { groupId: BigInt(group) } })).toBe(1);
  });

  it('refuses end users, inactive agents, unknown and other accounts\' users and groups with 422', async () => {
    const group = await newGroup('Checked');
    const inactive = await ctx.createUser(account, 'agent', { active: false });
    const cases: [string, Record<string, unknown>, Record<string, { error: string; description: string }[]>][] = [
      ['an end user', { user_id: Number(endUser.id), group_id: group }, { user_id: [{ error: 'InvalidValue', description: 'User: must be an agent or an admin' }] }],
      ['a deactivated agent', { user_id: Number(inactive.id), group_id: group }, { user_id: [{ error: 'InvalidValue', description: 'User: is deactivated' }] }],
      ['an unknown user', { user_id: 99999999, group_id: group }, { user_id: [{ error: 'NotFound', description: 'User: 99999999 not found' }] }],
      ["another account's agent", { user_id: Number(otherAgent.id), group_id: group }, { user_id: [{ error: 'NotFound', description: `User: ${otherAgent.id} not found` }] }],
      ["another account's group", { user_id: Number(agent.id), group_id: otherGroup }, { group_id: [{ error: 'NotFound', description: `Group: ${otherGroup} not found` }] }],
      ['nothing', {}, { user_id: [{ error: 'BlankValue', description: 'User: cannot be blank' }], group_id: [{ error: 'BlankValue', description: 'Group: cannot be blank' }] }],
      ['nulls', { user_id: null, group_id: null }, { user_id: [{ error: 'BlankValue', description: 'User: cannot be blank' }], group_id: [{ error: 'BlankValue', description: 'Group: cannot be blank' }] }],
      ['a string id', { user_id: String(agent.id), group_id: group }, { user_id: [{ error: 'InvalidValue', description: 'User: must be a positive integer' }] }],
      ['a zero id', { user_id: Number(agent.id), group_id: 0 }, { group_id: [{ error: 'InvalidValue', description: 'Group: must be a positive integer' }] }],
    ];
    for (const [what, body, details] of cases) {
      const res = await send('POST', '/group_memberships', admin.basic, { group_membership: body });
      expect([what, res.statusCode, res.json()]).toEqual([what, 422, { error: 'RecordInvalid', description: 'Record validation errors', details }]);
    }
    expect(await ctx.db.prisma.groupMembership.count({ where: { groupId: BigInt(group) } })).toBe(0);
    expect(await auditOf(ctx, 'group', group)).toHaveLength(1);
  });

  it('agents read but do not write; end users and read-only tokens are refused; other accounts see nothing (404)', async () => {
    const group = await newGroup('Access');
    const membership = await add(agent.id, group);
    for (const who of [admin, agent]) {
      expect((await send('GET', `/group_memberships/${membership.id}`, who.basic)).json()).toEqual({ group_membership: membership });
      expect(idsOf(await send('GET', '/group_memberships', who.basic))).toContain(membership.id);
      expect(idsOf(await send('GET', `/groups/${group}/memberships`, who.basic))).toEqual([membership.id]);
      expect(idsOf(await send('GET', `/users/${agent.id}/group_memberships`, who.basic))).toContain(membership.id);
    }
    const refused = await send('POST', '/group_memberships', agent.basic, { user_id: Number(agent.id), group_id: group });
    expect([refused.statusCode, refused.json()]).toEqual([403, { error: 'Forbidden', description: 'You do not have access to this resource' }]);
    expect((await send('DELETE', `/group_memberships/${membership.id}`, agent.basic)).statusCode).toBe(403);
    for (const url of ['/group_memberships', `/group_memberships/${membership.id}`, `/groups/${group}/memberships`, `/users/${agent.id}/group_memberships`]) {
      expect([url, (await send('GET', url, endUser.basic)).statusCode]).toEqual([url, 403]);
    }
    expect((await send('POST', '/group_memberships', endUser.basic, { user_id: Number(agent.id), group_id: group })).statusCode).toBe(403);
    const readOnly = await insertToken(ctx, admin, { scopes: ['read'] });
    expect((await send('GET', '/group_memberships', `Bearer ${readOnly.token}`)).statusCode).toBe(200);
    expect((await send('POST', '/group_memberships', `Bearer ${readOnly.token}`, { user_id: Number(admin.id), group_id: group })).statusCode).toBe(403);

    const other = await send('GET', `/group_memberships/${membership.id}`, otherAdmin.basic);
    expect([other.statusCode, other.json()]).toEqual([404, { error: 'RecordNotFound', description: 'Not found' }]);
    expect((await send('DELETE', `/group_memberships/${membership.id}`, otherAdmin.basic)).statusCode).toBe(404);
    expect((await send('GET', `/groups/${group}/memberships`, otherAdmin.basic)).statusCode).toBe(404);
    expect((await send('GET', `/users/${agent.id}/group_memberships`, otherAdmin.basic)).statusCode).toBe(404);
    expect(idsOf(await send('GET', '/group_memberships', otherAdmin.basic))).not.toContain(membership.id);
    for (const url of ['/groups/99999999/memberships', '/users/99999999/group_memberships.json', `/groups/${otherGroup}/memberships`, '/groups/abc/memberships']) {
      const res = await send('GET', url, admin.basic);
      expect([url, res.statusCode, res.json().error]).toEqual([url, 404, 'RecordNotFound']);
    }
    for (const id of ['0', 'abc', '-3', '1e3', '99999999']) expect((await send('GET', `/group_memberships/${id}`, admin.basic)).statusCode).toBe(404);
    expect((await ctx.db.prisma.groupMembership.findUnique({ where: { id: BigInt(membership.id) } }))).not.toBeNull();
  });

  it('lists all, by group and by user with offset pagination: next_page, previous_page, count', async () => {
    const own = await ctx.createAccount();
    const owner = await ctx.createUser(own, 'admin');
    const agents = [await newAgent(own), await newAgent(own), await newAgent(own)];
    const [g1, g2] = [await newGroup('One', owner), await newGroup('Two', owner)];
    const ids: number[] = [];
    for (const a of agents) ids.push((await add(a.id, g1, owner)).id);
    ids.push((await add(agents[0].id, g2, owner)).id, (await add(owner.id, g2, owner)).id);

    const page = (await send('GET', '/group_memberships?page=2&per_page=2', owner.basic)).json();
    expect(page).toEqual({
      group_memberships: [expect.objectContaining({ id: ids[2] }), expect.objectContaining({ id: ids[3] })],
      next_page: 'http://localhost/api/v2/group_memberships?page=3&per_page=2',
      previous_page: 'http://localhost/api/v2/group_memberships?page=1&per_page=2',
      count: 5,
    });
    const all = (await send('GET', '/group_memberships.json?per_page=500', owner.basic)).json();
    expect([all.group_memberships.map((m: Membership) => m.id), all.next_page, all.previous_page, all.count]).toEqual([ids, null, null, 5]);

    const ofGroup = (await send('GET', `/groups/${g1}/memberships.json?per_page=2`, owner.basic)).json();
    expect(ofGroup).toEqual({
      group_memberships: [expect.objectContaining({ id: ids[0], group_id: g1 }), expect.objectContaining({ id: ids[1], group_id: g1 })],
      next_page: `http://localhost/api/v2/groups/${g1}/memberships.json?per_page=2&page=2`,
      previous_page: null,
      count: 3,
    });
    const ofUser = (await send('GET', `/users/${agents[0].id}/group_memberships`, owner.basic)).json();
    expect([ofUser.group_memberships.map((m: Membership) => [m.id, m.group_id]), ofUser.count]).toEqual([[[ids[0], g1], [ids[3], g2]], 2]);
    // a user (or group) of the account without memberships: an empty page
    const lonely = await newAgent(own);
    expect((await send('GET', `/users/${lonely.id}/group_memberships`, owner.basic)).json()).toEqual({ group_memberships: [], next_page: null, previous_page: null, count: 0 });
    for (const q of ['page=0', 'per_page=0', 'page=x', 'page=101&per_page=100']) {
      const res = await send('GET', `/groups/${g1}/memberships?${q}`, owner.basic);
      expect([q, res.statusCode, res.json().error]).toEqual([q, 400, 'InvalidRequest']);
    }
  });

  it('DELETE removes it (204, audited), then 404; the user and the group stay', async () => {
    const group = await newGroup('Leaving');
    const membership = await add(agent.id, group);
    const deleted = await send('DELETE', `/group_memberships/${membership.id}.json`, admin.basic);
    expect([deleted.statusCode, deleted.body]).toEqual([204, '']);
    expect((await send('GET', `/group_memberships/${membership.id}`, admin.basic)).statusCode).toBe(404);
    expect((await send('DELETE', `/group_memberships/${membership.id}`, admin.basic)).statusCode).toBe(404);
    expect((await send('GET', `/groups/${group}`, admin.basic)).statusCode).toBe(200);
    expect((await send('GET', `/users/${agent.id}`, admin.basic)).statusCode).toBe(200);
    expect((await auditOf(ctx, 'group_membership', membership.id)).map((a) => [a.action, a.via, a.request_id])).toEqual([
      ['create', 'api', expect.any(String)],
      ['destroy', 'api', deleted.headers['x-request-id']],
    ]);
    // the same pair may be added again
    expect((await add(agent.id, group)).id).not.toBe(membership.id);
  });

  it('deleting a group, or deleting, deactivating or demoting a user, removes their memberships (each audited)', async () => {
    const [kept, doomed] = [await newGroup('Kept'), await newGroup('Doomed')];
    const [a1, a2, a3, a4] = [await newAgent(), await newAgent(), await newAgent(), await newAgent()];
    const inDoomed = [await add(a1.id, doomed), await add(a2.id, doomed)];
    const inKept = [await add(a1.id, kept), await add(a2.id, kept), await add(a3.id, kept), await add(a4.id, kept)];

    const res = await send('DELETE', `/groups/${doomed}`, admin.basic);
    expect(res.statusCode).toBe(204);
    expect(await ctx.db.prisma.groupMembership.count({ where: { groupId: BigInt(doomed) } })).toBe(0);
    for (const m of inDoomed) {
      expect(await auditOf(ctx, 'group_membership', m.id)).toEqual([
        expect.objectContaining({ action: 'create' }),
        expect.objectContaining({ action: 'destroy', change_description: 'Removed: the group was deleted', request_id: res.headers['x-request-id'] }),
      ]);
    }

    const gone = async (m: Membership) => (await ctx.db.prisma.groupMembership.findUnique({ where: { id: BigInt(m.id) } })) === null;
    expect((await send('DELETE', `/users/${a1.id}`, admin.basic)).statusCode).toBe(200);
    expect((await send('PUT', `/users/${a2.id}`, admin.basic, { user: { active: false } })).statusCode).toBe(200);
    expect((await send('PUT', `/users/${a3.id}`, admin.basic, { user: { role: 'end_user' } })).statusCode).toBe(200);
    // an agent made admin stays a member
    expect((await send('PUT', `/users/${a4.id}`, admin.basic, { user: { role: 'admin' } })).statusCode).toBe(200);
    expect(await Promise.all(inKept.map(gone))).toEqual([true, true, true, false]);
    expect((await auditOf(ctx, 'group_membership', inKept[2].id)).map((a) => a.change_description)).toEqual([
      expect.stringContaining('Added'), 'Removed: the user became an end user',
    ]);
    expect((await send('GET', `/groups/${kept}/memberships`, admin.basic)).json().group_memberships.map((m: Membership) => m.id)).toEqual([inKept[3].id]);
  });

  describe('GraphQL', () => {
    const gql = (who: TestUser, query: string, variables?: Record<string, unknown>) => ctx.graphql(query, variables, { authorization: who.basic });
    const CREATE = 'mutation($input: GroupMembershipInput!) { createGroupMembership(input: $input) { id url userId groupId default createdAt updatedAt } }';

    it('createGroupMembership, groupMemberships (filtered, paged), groupMembershipCount, groupMembership(id), deleteGroupMembership', async () => {
      const group = await newGroup('Gql');
      const member = await newAgent();
      const created = (await gql(admin, CREATE, { input: { userId: String(member.id), groupId: String(group) } })).json().data.createGroupMembership;
      expect(created).toEqual({
        id: expect.any(String), url: expect.stringMatching(/\/api\/v2\/group_memberships\/\d+\.json$/), userId: String(member.id), groupId: String(group), default: false,
        createdAt: expect.any(String), updatedAt: expect.any(String),
      });
      await add(admin.id, group);

      const listed = await gql(agent, `query($g: ID, $u: ID) {
        byGroup: groupMemberships(groupId: $g) { userId } page: groupMemberships(groupId: $g, page: 2, perPage: 1) { userId }
        byUser: groupMemberships(userId: $u) { id } both: groupMemberships(groupId: $g, userId: $u) { id }
        inGroup: groupMembershipCount(groupId: $g) ofUser: groupMembershipCount(userId: $u)
        one: groupMembership(id: "${created.id}") { groupId }
      }`, { g: String(group), u: String(member.id) });
      expect(listed.json()).toEqual({
        data: {
          byGroup: [{ userId: String(member.id) }, { userId: String(admin.id) }], page: [{ userId: String(admin.id) }],
          byUser: [{ id: created.id }], both: [{ id: created.id }], inGroup: 2, ofUser: 1, one: { groupId: String(group) },
        },
      });
      expect((await gql(otherAdmin, `{ groupMembership(id: "${created.id}") { id } }`)).json().data.groupMembership).toBeNull();
      const foreign = await gql(otherAdmin, 'query($g: ID) { groupMemberships(groupId: $g) { id } }', { g: String(group) });
      expect(foreign.json().errors[0].extensions.code).toBe('NOT_FOUND');
      expect((await gql(admin, '{ groupMemberships(page: 0) { id } }')).json().errors[0].extensions.code).toBe('BAD_REQUEST');

      const twice = await gql(admin, CREATE, { input: { userId: String(member.id), groupId: String(group) } });
      expect(twice.json().errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect((await gql(agent, CREATE, { input: { userId: String(agent.id), groupId: String(group) } })).json().errors[0].extensions.code).toBe('FORBIDDEN');
      expect((await gql(agent, `mutation { deleteGroupMembership(id: "${created.id}") }`)).json().errors[0].extensions.code).toBe('FORBIDDEN');
      expect((await gql(otherAdmin, `mutation { deleteGroupMembership(id: "${created.id}") }`)).json().errors[0].extensions.code).toBe('NOT_FOUND');
      expect((await gql(admin, `mutation { deleteGroupMembership(id: "${created.id}") }`)).json().data.deleteGroupMembership).toBe(true);
      expect((await auditOf(ctx, 'group_membership', created.id)).map((a) => [a.action, a.via])).toEqual([
        ['create', 'graphql'],
        ['destroy', 'graphql'],
      ]);
      expect((await gql(admin, '{ auditLogs(filter: { sourceType: GROUP_MEMBERSHIP }, first: 100) { totalCount } }')).json().data.auditLogs.totalCount).toBeGreaterThan(1);
    });
  });
});
