import { parse } from 'graphql';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { operationCost } from '../src/graphql/limits';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// The audit log's read API (docs/api.md, "Audit log"): GET /api/v2/audit_logs[/{id}]
// and GraphQL auditLogs/auditLog, on records seeded straight into the table
// (their writing is test/audit-log.coverage.test.ts's subject).

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const TYPES = ['oauth_client', 'oauth_token', 'user'] as const;
const ACTIONS = ['create', 'update', 'destroy'] as const;
const LABELS = { create: 'Created', update: 'Updated', destroy: 'Deleted' };
const BASE = Date.parse('2026-11-20T10:00:00Z');

interface Seeded {
  id: number;
  source_type: string;
  action: string;
  actor_id: number | null;
  created_at: string;
}

describe('audit log: read API (REST and GraphQL)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let admin2: TestUser;
  let agent: TestUser;
  let endUser: TestUser;
  let other: TestUser;
  /** account A's records, in id (= creation) order */
  let seeded: Seeded[];
  let otherId: number;

  const get = (url: string, headers: Record<string, string> = { authorization: admin.basic }) => ctx.inject({ method: 'GET', url, headers });
  const list = async (query = '', headers?: Record<string, string>) => {
    const res = await get(`/api/v2/audit_logs.json${query}`, headers);
    expect({ status: res.statusCode, body: res.statusCode === 200 ? undefined : res.json() }).toEqual({ status: 200, body: undefined });
    return res.json() as { audit_logs: Record<string, unknown>[]; meta: { has_more: boolean; after_cursor: string | null; before_cursor: string | null }; links: { next: string | null; prev: string | null } };
  };
  const ids = (logs: Record<string, unknown>[]) => logs.map((l) => l.id as number);
  const newestFirst = (rows: Seeded[]) => rows.map((r) => r.id).reverse();
  /** a link as inject takes it */
  const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

  async function seed(accountId: bigint, i: number, actor: TestUser | null): Promise<Seeded> {
    const row = {
      source_type: TYPES[i % 3], action: ACTIONS[Math.floor(i / 3) % 3], actor_id: actor === null ? null : Number(actor.id),
      created_at: new Date(BASE + i * 60_000).toISOString().replace('.000Z', 'Z'),
    };
    const [inserted] = await ctx.db.sql<{ id: string | number }>(
      `INSERT INTO audit_logs (account_id, actor_id, actor_name, action, source_type, source_id, source_label, changed_fields, change_description, via, request_id, ip_address, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9, 'api', $10, '127.0.0.1', $11) RETURNING id`,
      [String(accountId), row.actor_id === null ? null : String(row.actor_id), actor === null ? 'System' : actor.email, row.action, row.source_type, String(100 + i),
        `label ${i}`, row.action === 'update' ? ['name'] : [], `change ${i}`, `req-${i}`, new Date(row.created_at)],
    );
    return { id: Number(inserted.id), ...row };
  }

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    admin2 = await ctx.createUser(account, 'admin');
    agent = await ctx.createUser(account, 'agent');
    endUser = await ctx.createUser(account, 'end_user');
    const otherAccount = await ctx.createAccount();
    other = await ctx.createUser(otherAccount, 'admin');
    seeded = [];
    for (let i = 0; i < 12; i++) {
      seeded.push(await seed(account, i, [admin, admin2, null][i % 3 === 0 ? 0 : i % 2 === 0 ? 1 : 2]));
      // the other account's records interleave with A's
      if (i % 4 === 0) otherId = (await seed(otherAccount, i, other)).id;
    }
  });
  afterAll(() => ctx.close());

  describe('GET /api/v2/audit_logs', () => {
    it("lists the account's records newest first, in Zendesk's shape plus changed_fields, request_id and via", async () => {
      const body = await list();
      expect(ids(body.audit_logs)).toEqual(newestFirst(seeded));
      expect(body.meta).toEqual({ has_more: false, after_cursor: expect.any(String), before_cursor: expect.any(String) });
      expect(body.links).toEqual({ next: null, prev: null });
      const first = seeded[0];
      const record = body.audit_logs.at(-1)!;
      expect(record).toEqual({
        url: `http://localhost:80/api/v2/audit_logs/${first.id}.json`,
        id: first.id,
        action_label: 'Created',
        actor_id: Number(admin.id),
        actor_name: admin.email,
        source_id: 100,
        source_type: 'oauth_client',
        source_label: 'label 0',
        action: 'create',
        change_description: 'change 0',
        ip_address: '127.0.0.1',
        created_at: '2026-11-20T10:00:00Z',
        changed_fields: [],
        request_id: 'req-0',
        via: 'api',
      });
      for (const l of body.audit_logs) expect(l.action_label).toBe(LABELS[l.action as keyof typeof LABELS]);
      // the system as actor: actor_id null
      expect(body.audit_logs.find((l) => l.actor_id === null)).toMatchObject({ actor_name: 'System' });
    });

    it('shows one record; another account\'s id, an unknown id and a malformed one are 404', async () => {
      const res = await get(`/api/v2/audit_logs/${seeded[4].id}.json`);
      expect(res.statusCode).toBe(200);
      expect(res.json().audit_log).toMatchObject({ id: seeded[4].id, source_type: 'oauth_token', action: 'update', changed_fields: ['name'], action_label: 'Updated' });
      expect((await get(`/api/v2/audit_logs/${seeded[4].id}`)).statusCode).toBe(200);
      for (const id of [otherId, 99999999, 'abc', 0, -1]) {
        const missing = await get(`/api/v2/audit_logs/${id}.json`);
        expect({ id, status: missing.statusCode, body: missing.json() }).toEqual({ id, status: 404, body: { error: 'RecordNotFound', description: 'Not found' } });
      }
      // and the other account's admin sees its own record
      expect((await get(`/api/v2/audit_logs/${otherId}.json`, { authorization: other.basic })).statusCode).toBe(200);
    });

    it('never lists another account\'s records', async () => {
      const mine = ids((await list()).audit_logs);
      const theirs = ids((await list('', { authorization: other.basic })).audit_logs);
      expect(theirs).toHaveLength(3);
      expect(mine.filter((id) => theirs.includes(id))).toEqual([]);
    });

    it('sorts oldest first with sort=created_at, newest first with sort=-created_at', async () => {
      expect(ids((await list('?sort=created_at')).audit_logs)).toEqual(seeded.map((r) => r.id));
      expect(ids((await list('?sort=-created_at')).audit_logs)).toEqual(newestFirst(seeded));
    });

    it('filters by source type, actor, action and created_at range, alone and together', async () => {
      const expectFilter = async (query: string, keep: (r: Seeded) => boolean) => {
        const kept = seeded.filter(keep);
        const want = query.includes('sort=created_at') ? kept.map((r) => r.id) : newestFirst(kept);
        expect(want.length).toBeGreaterThan(0);
        expect({ query, ids: ids((await list(query)).audit_logs) }).toEqual({ query, ids: want });
      };
      await expectFilter('?filter[source_type]=oauth_token', (r) => r.source_type === 'oauth_token');
      await expectFilter(`?filter[actor_id]=${admin2.id}`, (r) => r.actor_id === Number(admin2.id));
      await expectFilter('?filter[action]=destroy', (r) => r.action === 'destroy');
      const from = seeded[3].created_at;
      const to = seeded[8].created_at;
      await expectFilter(`?filter[created_at][]=${from}&filter[created_at][]=${to}`, (r) => r.created_at >= from && r.created_at <= to);
      // with an offset (the + encoded, or left as it is and read as a space)
      await expectFilter(`?filter[created_at][]=2026-11-20T12:03:00%2B02:00&filter[created_at][]=2026-11-20T12:08:00+02:00`, (r) => r.created_at >= from && r.created_at <= to);
      await expectFilter(
        `?filter[source_type]=oauth_client&filter[action]=create&filter[actor_id]=${admin.id}&filter[created_at][]=${seeded[0].created_at}&filter[created_at][]=${to}&sort=created_at`,
        (r) => r.source_type === 'oauth_client' && r.action === 'create' && r.actor_id === Number(admin.id) && r.created_at <= to,
      );
      // the match can be empty: an actor of another account
      expect((await list(`?filter[actor_id]=${other.id}`)).audit_logs).toEqual([]);
    });

    it('pages with cursors forward and back, keeping the other parameters in the links, in both orders', async () => {
      for (const [sort, order] of [['', newestFirst(seeded)], ['&sort=created_at', seeded.map((r) => r.id)]] as const) {
        const pages: number[][] = [];
        let body = await list(`?page[size]=5${sort}`);
        pages.push(ids(body.audit_logs));
        expect(body.meta.has_more).toBe(true);
        expect(body.links.prev).toBeNull();
        while (body.links.next) {
          expect(body.links.next).toContain('page%5Bsize%5D=5');
          if (sort) expect(body.links.next).toContain('sort=created_at');
          body = await list(pathOf(body.links.next).replace('/api/v2/audit_logs.json', ''));
          pages.push(ids(body.audit_logs));
        }
        expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
        expect(pages.flat()).toEqual(order);
        expect(body.meta.has_more).toBe(false);
        // back from the last page
        const back: number[][] = [ids(body.audit_logs)];
        while (body.links.prev) {
          body = await list(pathOf(body.links.prev).replace('/api/v2/audit_logs.json', ''));
          back.unshift(ids(body.audit_logs));
        }
        expect(back).toEqual(pages);
        expect(body.meta.has_more).toBe(false); // page[before] of the first page: nothing further back
      }
    });

    it('clamps page[size] to 100 and pages a filtered list', async () => {
      expect((await list('?page[size]=1000')).audit_logs).toHaveLength(12);
      const first = await list('?page[size]=2&filter[source_type]=user');
      expect(ids(first.audit_logs)).toEqual(newestFirst(seeded.filter((r) => r.source_type === 'user')).slice(0, 2));
      const second = await list(pathOf(first.links.next!).replace('/api/v2/audit_logs.json', ''));
      expect(ids(second.audit_logs)).toEqual(newestFirst(seeded.filter((r) => r.source_type === 'user')).slice(2, 4));
    });

    it.each([
      ['an unknown source type', '?filter[source_type]=ticket'],
      ['an actor id that is not a positive integer', '?filter[actor_id]=abc'],
      ['actor id 0', '?filter[actor_id]=0'],
      ['an unknown action', '?filter[action]=delete'],
      ['created_at given once', '?filter[created_at][]=2026-11-20T10:00:00Z'],
      ['created_at given three times', '?filter[created_at][]=2026-11-20T10:00:00Z&filter[created_at][]=2026-11-20T11:00:00Z&filter[created_at][]=2026-11-20T12:00:00Z'],
      ['created_at not ISO 8601', '?filter[created_at][]=yesterday&filter[created_at][]=2026-11-20T11:00:00Z'],
      ['created_at without a zone', '?filter[created_at][]=2026-11-20T10:00:00&filter[created_at][]=2026-11-20T11:00:00Z'],
      ['created_at an impossible date', '?filter[created_at][]=2026-13-45T10:00:00Z&filter[created_at][]=2026-11-20T11:00:00Z'],
      ['a range that ends before it starts', '?filter[created_at][]=2026-11-20T11:00:00Z&filter[created_at][]=2026-11-20T10:00:00Z'],
      ['an unknown sort', '?sort=id'],
      ['page[size]=0', '?page[size]=0'],
      ['page[size] not a number', '?page[size]=ten'],
      ['a tampered cursor', '?page[after]=MTI.AAAAAAAAAAAAAAAA'],
      ['garbage as cursor', '?page[before]=%00%01'],
    ])('answers 400 InvalidRequest for %s', async (_what, query) => {
      const res = await get(`/api/v2/audit_logs.json${query}`);
      expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error: 'InvalidRequest' });
    });
  });

  describe('who may read it: admins, with read or the auditlogs scope', () => {
    it.each([
      ['an agent (Basic)', () => ({ authorization: agent.basic }), 403],
      ['an end user (Basic)', () => ({ authorization: endUser.basic }), 403],
      ['nobody', () => ({}), 401],
    ])('%s is refused', async (_who, headers, status) => {
      expect((await get('/api/v2/audit_logs.json', headers())).statusCode).toBe(status);
      expect((await get(`/api/v2/audit_logs/${seeded[0].id}.json`, headers())).statusCode).toBe(status);
    });

    it.each([
      [['auditlogs:read'], 200],
      [['auditlogs'], 200],
      [['read'], 200],
      [['read', 'auditlogs:read'], 200],
      [['tickets:read'], 403],
      [['users:read'], 403],
      [['write'], 403],
      [['auditlogs:write'], 403], // an invalid scope: every request with the token is refused
    ])("an admin's Bearer token with scopes %j: %i", async (scopes, status) => {
      const { token } = await insertToken(ctx, admin, { scopes });
      expect((await get('/api/v2/audit_logs.json', bearer(token))).statusCode).toBe(status);
      expect((await get(`/api/v2/audit_logs/${seeded[0].id}.json`, bearer(token))).statusCode).toBe(status);
      const gql = (await ctx.graphql(`{ auditLogs(first: 1) { edges { node { id } } } auditLog(id: "${seeded[0].id}") { id } }`, {}, bearer(token))).json();
      if (status === 200) expect(gql.errors).toBeUndefined();
      else expect(gql.errors[0].extensions.code).toBe('FORBIDDEN');
    });

    it("an agent's token with auditlogs:read is still refused (admins only)", async () => {
      const { token } = await insertToken(ctx, agent, { scopes: ['auditlogs:read'] });
      expect((await get('/api/v2/audit_logs.json', bearer(token))).statusCode).toBe(403);
    });

    it("a token whose client is read-only still reads it; auditlogs:read on a write-only client does not", async () => {
      const readOnly = await insertToken(ctx, admin, { scopes: ['auditlogs:read'], clientScopes: 'read' });
      expect((await get('/api/v2/audit_logs.json', bearer(readOnly.token))).statusCode).toBe(200);
      const writeOnly = await insertToken(ctx, admin, { scopes: ['auditlogs:read'], clientScopes: 'write' });
      expect((await get('/api/v2/audit_logs.json', bearer(writeOnly.token))).statusCode).toBe(403);
    });
  });

  describe('GraphQL auditLogs / auditLog', () => {
    const gql = async (query: string, variables: Record<string, unknown> = {}) => (await ctx.graphql(query, variables, { authorization: admin.basic })).json();
    const PAGE = `query($filter: AuditLogFilter, $sort: AuditLogSort, $first: Int, $after: String, $last: Int, $before: String) {
      auditLogs(filter: $filter, sort: $sort, first: $first, after: $after, last: $last, before: $before) {
        totalCount edges { cursor node { id action actionLabel sourceType actorId via createdAt url } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      } }`;
    const page = async (variables: Record<string, unknown>) => {
      const body = await gql(PAGE, variables);
      expect(body.errors).toBeUndefined();
      return body.data.auditLogs as { totalCount: number; edges: { cursor: string; node: { id: string } }[]; pageInfo: Record<string, unknown> };
    };
    const nodeIds = (p: { edges: { node: { id: string } }[] }) => p.edges.map((e) => Number(e.node.id));

    it('is a Relay connection, newest first: first/after forward, last/before backward, totalCount of the filter', async () => {
      const first = await page({ first: 5 });
      expect(first.totalCount).toBe(12);
      expect(nodeIds(first)).toEqual(newestFirst(seeded).slice(0, 5));
      expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      const second = await page({ first: 5, after: first.pageInfo.endCursor });
      expect(nodeIds(second)).toEqual(newestFirst(seeded).slice(5, 10));
      expect(second.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
      const back = await page({ last: 5, before: second.pageInfo.startCursor });
      expect(nodeIds(back)).toEqual(nodeIds(first));
      expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      // last without before: the end of the list (the oldest), still newest first within the page
      const end = await page({ last: 3 });
      expect(nodeIds(end)).toEqual(newestFirst(seeded).slice(9));
      expect(end.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      const oldest = await page({ first: 3, sort: 'CREATED_AT_ASC' });
      expect(nodeIds(oldest)).toEqual(seeded.slice(0, 3).map((r) => r.id));
      const filtered = await page({ filter: { sourceType: 'OAUTH_TOKEN', action: 'UPDATE' } });
      expect(nodeIds(filtered)).toEqual(newestFirst(seeded.filter((r) => r.source_type === 'oauth_token' && r.action === 'update')));
      expect(filtered.totalCount).toBe(filtered.edges.length);
      const ranged = await page({ filter: { createdFrom: seeded[10].created_at }, sort: 'CREATED_AT_ASC' });
      expect(nodeIds(ranged)).toEqual([seeded[10].id, seeded[11].id]);
      const until = await page({ filter: { createdTo: seeded[1].created_at, actorId: String(admin.id) } });
      expect(nodeIds(until)).toEqual([seeded[0].id]);
    });

    it('auditLog(id) shows a record, null for another account\'s or an unknown id', async () => {
      const body = await gql(`{ a: auditLog(id: "${seeded[2].id}") { id action actionLabel sourceType sourceId sourceLabel changedFields via requestId ipAddress actorId actorName changeDescription url }
        b: auditLog(id: "${otherId}") { id } c: auditLog(id: "999999999") { id } d: auditLog(id: "x") { id } }`);
      expect(body.errors).toBeUndefined();
      expect(body.data).toEqual({
        a: {
          id: String(seeded[2].id), action: 'CREATE', actionLabel: 'Created', sourceType: 'USER', sourceId: '102', sourceLabel: 'label 2', changedFields: [],
          via: 'API', requestId: 'req-2', ipAddress: '127.0.0.1', actorId: String(admin2.id), actorName: admin2.email, changeDescription: 'change 2',
          url: `http://localhost:80/api/v2/audit_logs/${seeded[2].id}.json`,
        },
        b: null, c: null, d: null,
      });
    });

    it.each([
      ['a tampered cursor', { after: 'MTI.AAAAAAAAAAAAAAAA' }],
      ['after and before together', { after: 'a', before: 'b' }],
      ['first: 0', { first: 0 }],
      ['an actor id that is no id', { filter: { actorId: 'abc' } }],
      ['a range that ends before it starts', { filter: { createdFrom: '2026-11-21T00:00:00Z', createdTo: '2026-11-20T00:00:00Z' } }],
    ])('refuses %s with BAD_REQUEST', async (_what, variables) => {
      const body = await gql(PAGE, variables);
      expect(body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['BAD_REQUEST']);
    });

    it('is costed like the other connections: its selection times its page size, variables included (graphql/limits.ts)', () => {
      const schema = buildGraphQLSchema();
      const FULL = 'query($n: Int) { auditLogs(first: $n) { totalCount edges { cursor node { id action actionLabel actorId actorName sourceId sourceType sourceLabel changeDescription changedFields via requestId ipAddress createdAt url } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }';
      expect(operationCost(schema, parse(FULL), { n: 100 })).toBe(2401);
      expect(operationCost(schema, parse(FULL), {})).toBe(2401); // absent: a full page
      expect(operationCost(schema, parse(FULL), { n: 1 })).toBe(25);
      expect(operationCost(schema, parse(FULL.replace('first: $n', 'last: $n')), { n: 10 })).toBe(241);
    });

    it('refuses an unknown enum value or a malformed date before running (400), never a 500', async () => {
      for (const variables of [{ filter: { sourceType: 'TICKET' } }, { filter: { createdFrom: 'yesterday' } }, { sort: 'ID' }]) {
        const res = await ctx.graphql(PAGE, variables, { authorization: admin.basic });
        expect(res.statusCode).toBe(400);
        expect(res.json().errors[0].extensions.code).toBe('BAD_USER_INPUT');
      }
    });
  });
});
