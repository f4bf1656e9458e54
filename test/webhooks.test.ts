import type { LightMyRequestResponse } from 'fastify';
import { auditOf } from './helpers/audit';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Webhooks": Zendesk's Webhooks API, admins only, over REST and GraphQL.

jest.setTimeout(120_000);

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const REVOKED = 'zen:event-type:oauth_token.revoked';
const CREATED = 'zen:event-type:oauth_client.created';
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

describe('webhooks (docs/api.md, "Webhooks")', () => {
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

  const send = (method: Method, url: string, authorization: string, payload?: unknown, contentType = 'application/json'): Promise<LightMyRequestResponse> =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: payload === undefined ? { authorization } : { 'content-type': contentType, authorization }, payload: payload as object });
  const fields = (over: Record<string, unknown> = {}) => ({
    name: 'Revocations', endpoint: 'https://hooks.example.com/zendesk', http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [REVOKED], ...over,
  });
  const create = async (who: TestUser = admin, over: Record<string, unknown> = {}) => {
    const res = await send('POST', '/webhooks', who.basic, { webhook: fields(over) });
    expect(res.statusCode).toBe(201);
    return res.json().webhook as Record<string, unknown> & { id: string };
  };
  const details = (res: LightMyRequestResponse) => [res.statusCode, Object.keys(res.json().details ?? {})];

  it('CRUD round trip in Zendesk shapes: 201 + Location, show, list, PUT and PATCH (204), DELETE (204), each audited', async () => {
    const res = await send('POST', '/webhooks', admin.basic, { webhook: { ...fields(), description: 'To the SIEM', id: 'x', created_by: '9' } });
    expect(res.statusCode).toBe(201);
    const webhook = res.json().webhook;
    expect(webhook).toEqual({
      id: expect.stringMatching(/^[1-9]\d*$/), name: 'Revocations', description: 'To the SIEM', endpoint: 'https://hooks.example.com/zendesk', http_method: 'POST',
      request_format: 'json', status: 'active', subscriptions: [REVOKED], created_at: expect.stringMatching(ISO), created_by: String(admin.id), updated_at: null, updated_by: null,
    });
    expect(res.headers.location).toBe(`http://localhost:80/api/v2/webhooks/${webhook.id}.json`);
    expect(JSON.stringify(webhook)).not.toMatch(/secret/);
    expect((await send('GET', `/webhooks/${webhook.id}.json`, admin.basic)).json()).toEqual({ webhook });
    const list = (await send('GET', '/webhooks', admin.basic)).json();
    expect(list.webhooks).toContainEqual(webhook);
    expect(list.meta).toEqual({ has_more: false, after_cursor: expect.any(String), before_cursor: expect.any(String) });

    const put = await send('PUT', `/webhooks/${webhook.id}`, admin.basic, { webhook: fields({ name: 'Clients', subscriptions: [CREATED, CREATED] }) });
    expect([put.statusCode, put.body]).toEqual([204, '']);
    const replaced = (await send('GET', `/webhooks/${webhook.id}`, admin.basic)).json().webhook;
    // PUT replaces: the omitted description is cleared, duplicates are dropped
    expect(replaced).toMatchObject({ name: 'Clients', description: null, subscriptions: [CREATED], updated_by: String(admin.id), updated_at: expect.stringMatching(ISO) });

    const patch = await send('PATCH', `/webhooks/${webhook.id}`, admin.basic, { webhook: { status: 'inactive' } }, 'application/merge-patch+json');
    expect(patch.statusCode).toBe(204);
    expect((await send('GET', `/webhooks/${webhook.id}`, admin.basic)).json().webhook).toMatchObject({ name: 'Clients', status: 'inactive', subscriptions: [CREATED] });
    // JSON merge patch: null clears an optional field
    expect((await send('PATCH', `/webhooks/${webhook.id}`, admin.basic, { subscriptions: null, description: 'Back' })).statusCode).toBe(204);
    expect((await send('GET', `/webhooks/${webhook.id}`, admin.basic)).json().webhook).toMatchObject({ description: 'Back', subscriptions: [] });

    expect((await send('DELETE', `/webhooks/${webhook.id}`, admin.basic)).statusCode).toBe(204);
    expect((await send('GET', `/webhooks/${webhook.id}`, admin.basic)).statusCode).toBe(404);
    expect((await auditOf(ctx, 'webhook', webhook.id)).map((r) => [r.action, r.changed_fields, r.actor_id])).toEqual([
      ['create', ['name', 'description', 'endpoint', 'http_method', 'request_format', 'status', 'subscriptions', 'signing_secret'], String(admin.id)],
      ['update', ['name', 'description', 'subscriptions'], String(admin.id)],
      ['update', ['status'], String(admin.id)],
      ['update', ['description', 'subscriptions'], String(admin.id)],
      ['destroy', [], String(admin.id)],
    ]);
  });

  it('422 for an unknown event type, missing fields, bad values and a bad endpoint, naming each field', async () => {
    const unknown = await send('POST', '/webhooks', admin.basic, { webhook: fields({ subscriptions: [REVOKED, 'zen:event-type:ticket.created'] }) });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().details.subscriptions[0]).toEqual({ error: 'InvalidValue', description: expect.stringContaining('"zen:event-type:ticket.created"') });
    const bare = await send('POST', '/webhooks', admin.basic, { webhook: fields({ subscriptions: ['oauth_token.revoked'] }) });
    expect(details(bare)).toEqual([422, ['subscriptions']]);

    const missing = await send('POST', '/webhooks', admin.basic, { webhook: {} });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().details).toEqual({
      name: [{ error: 'BlankValue', description: 'Name: cannot be blank' }],
      endpoint: [{ error: 'BlankValue', description: 'Endpoint: cannot be blank' }],
      http_method: [{ error: 'BlankValue', description: 'HTTP method: cannot be blank' }],
      request_format: [{ error: 'BlankValue', description: 'Request format: cannot be blank' }],
      status: [{ error: 'BlankValue', description: 'Status: cannot be blank' }],
    });
    const bad = await send('POST', '/webhooks', admin.basic, { webhook: fields({ http_method: 'TRACE', request_format: 'xml', status: 'on', subscriptions: 'all' }) });
    expect(details(bad)).toEqual([422, ['http_method', 'request_format', 'status', 'subscriptions']]);
    // events are sent with POST (Zendesk's rule)
    const get = await send('POST', '/webhooks', admin.basic, { webhook: fields({ http_method: 'GET' }) });
    expect(get.json().details).toEqual({ http_method: [{ error: 'InvalidValue', description: 'HTTP method: must be POST for a webhook subscribed to events' }] });
    const getNoEvents = await create(admin, { http_method: 'GET', subscriptions: [] });
    expect(getNoEvents).toMatchObject({ http_method: 'GET', subscriptions: [] });
    const patched = await send('PATCH', `/webhooks/${getNoEvents.id}`, admin.basic, { subscriptions: [REVOKED] });
    expect(details(patched)).toEqual([422, ['http_method']]);
    expect((await send('GET', `/webhooks/${getNoEvents.id}`, admin.basic)).json().webhook.subscriptions).toEqual([]);

    for (const endpoint of ['not a url', '/relative/path', 'ftp://example.com/x', 'https://user:pw@example.com/x', 'javascript:alert(1)']) {
      const res = await send('POST', '/webhooks', admin.basic, { webhook: fields({ endpoint }) });
      expect([endpoint, res.statusCode, res.json().details.endpoint[0].error]).toEqual([endpoint, 422, 'InvalidValue']);
    }
    // PUT needs every required field; PATCH with null on one clears nothing
    const hook = await create();
    expect(details(await send('PUT', `/webhooks/${hook.id}`, admin.basic, { webhook: { name: 'Only a name' } }))).toEqual([422, ['endpoint', 'http_method', 'request_format', 'status']]);
    expect(details(await send('PATCH', `/webhooks/${hook.id}`, admin.basic, { webhook: { name: null } }))).toEqual([422, ['name']]);
    expect((await send('GET', `/webhooks/${hook.id}`, admin.basic)).json().webhook).toEqual(hook);
    const text = await ctx.inject({ method: 'PATCH', url: `/api/v2/webhooks/${hook.id}`, headers: { authorization: admin.basic, 'content-type': 'text/plain' }, payload: 'status=inactive' });
    expect(text.statusCode).toBe(415);
  });

  it('the signing secret: shown by GET, reset by POST (the old one is gone), stored encrypted, never in the audit log', async () => {
    const hook = await create();
    const shown = await send('GET', `/webhooks/${hook.id}/signing_secret`, admin.basic);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    const first = shown.json().signing_secret;
    expect(first).toEqual({ algorithm: 'SHA256', secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect((await send('GET', `/webhooks/${hook.id}/signing_secret.json`, admin.basic)).json().signing_secret).toEqual(first);

    const reset = await send('POST', `/webhooks/${hook.id}/signing_secret`, admin.basic);
    expect(reset.statusCode).toBe(201);
    const second = reset.json().signing_secret;
    expect(second.secret).not.toBe(first.secret);
    expect((await send('GET', `/webhooks/${hook.id}/signing_secret`, admin.basic)).json().signing_secret).toEqual(second);

    const [row] = await ctx.db.sql<Record<string, unknown>>('SELECT * FROM webhooks WHERE id = $1', [hook.id]);
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(second.secret);
    expect(stored).not.toContain(first.secret);
    expect(row.signing_secret).toMatch(/^v1\./);
    const audit = await auditOf(ctx, 'webhook', hook.id);
    expect(audit.at(-1)).toMatchObject({ action: 'update', changed_fields: ['signing_secret'] });
    expect(JSON.stringify(audit)).not.toContain(second.secret);
    expect(ctx.logs.join('\n')).not.toContain(second.secret);
    expect(ctx.logs.join('\n')).not.toContain(first.secret);
    expect((await send('GET', `/webhooks/${hook.id}/signing_secret`, otherAdmin.basic)).statusCode).toBe(404);
    expect((await send('POST', `/webhooks/${hook.id}/signing_secret`, agent.basic)).statusCode).toBe(403);
  });

  it('admins only: agents and end users 403, another account\'s admin 404 (as for an id that does not exist), scoped tokens', async () => {
    const hook = await create();
    for (const who of [agent, endUser]) {
      for (const [method, url, body] of [
        ['GET', '/webhooks'], ['GET', `/webhooks/${hook.id}`], ['POST', '/webhooks', { webhook: fields() }], ['PUT', `/webhooks/${hook.id}`, { webhook: fields() }],
        ['PATCH', `/webhooks/${hook.id}`, { status: 'inactive' }], ['DELETE', `/webhooks/${hook.id}`], ['GET', `/webhooks/${hook.id}/signing_secret`],
      ] as [Method, string, unknown?][]) {
        const res = await send(method, url, who.basic, body);
        expect([who.role, method, url, res.statusCode, res.json()]).toEqual([who.role, method, url, 403, { error: 'Forbidden', description: 'You do not have access to this resource' }]);
      }
    }
    const missing = await send('GET', '/webhooks/999999999', admin.basic);
    for (const [method, url, body] of [
      ['GET', `/webhooks/${hook.id}`], ['PUT', `/webhooks/${hook.id}`, { webhook: fields() }], ['PATCH', `/webhooks/${hook.id}`, { status: 'inactive' }],
      ['DELETE', `/webhooks/${hook.id}`], ['GET', `/webhooks/${hook.id}/signing_secret`], ['POST', `/webhooks/${hook.id}/signing_secret`],
    ] as [Method, string, unknown?][]) {
      const res = await send(method, url, otherAdmin.basic, body);
      expect([method, url, res.statusCode, res.json()]).toEqual([method, url, 404, missing.json()]);
    }
    expect((await send('GET', '/webhooks', otherAdmin.basic)).json().webhooks).toEqual([]);
    expect((await send('GET', `/webhooks/${hook.id}`, admin.basic)).json().webhook).toEqual(hook);
    // the webhooks scope grants them (read or write), and nothing else does but unscoped read/write
    const scoped = await insertToken(ctx, admin, { scopes: ['webhooks:read'] });
    expect((await send('GET', `/webhooks/${hook.id}`, `Bearer ${scoped.token}`)).statusCode).toBe(200);
    expect((await send('PATCH', `/webhooks/${hook.id}`, `Bearer ${scoped.token}`, { status: 'inactive' })).statusCode).toBe(403);
    const users = await insertToken(ctx, admin, { scopes: ['users'] });
    expect((await send('GET', '/webhooks', `Bearer ${users.token}`)).statusCode).toBe(403);
    const writer = await insertToken(ctx, admin, { scopes: ['webhooks'] });
    expect((await send('PATCH', `/webhooks/${hook.id}`, `Bearer ${writer.token}`, { status: 'inactive' })).statusCode).toBe(204);
  });

  it('lists in cursor pages, id ascending, with meta and links', async () => {
    const owner = await ctx.createUser(await ctx.createAccount(), 'admin');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(owner, { name: `W${i}` })).id);
    const first = (await send('GET', '/webhooks?page[size]=2', owner.basic)).json();
    expect(first.webhooks.map((w: { id: string }) => w.id)).toEqual(ids.slice(0, 2));
    expect(first.meta.has_more).toBe(true);
    const second = await ctx.inject({ method: 'GET', url: new URL(first.links.next).pathname + new URL(first.links.next).search, headers: { authorization: owner.basic } });
    expect(second.json().webhooks.map((w: { id: string }) => w.id)).toEqual(ids.slice(2, 4));
    expect((await send('GET', '/webhooks?page[after]=tampered', owner.basic)).statusCode).toBe(400);
  });

  it("filters by status and by a part of the name (Zendesk's filter[status], filter[name_contains])", async () => {
    const owner = await ctx.createUser(await ctx.createAccount(), 'admin');
    const a = await create(owner, { name: 'Billing events', status: 'inactive' });
    const b = await create(owner, { name: 'billing_100%' });
    const c = await create(owner, { name: 'Users' });
    const ids = async (query: string) => (await send('GET', `/webhooks?${query}`, owner.basic)).json().webhooks.map((w: { id: string }) => w.id);
    expect(await ids('filter[status]=active')).toEqual([b.id, c.id]);
    expect(await ids('filter[name_contains]=BILLING')).toEqual([a.id, b.id]);
    expect(await ids('filter[name_contains]=BILLING&filter[status]=inactive')).toEqual([a.id]);
    // % and _ are text, not patterns
    expect(await ids('filter[name_contains]=100%25')).toEqual([b.id]);
    expect(await ids('filter[name_contains]=_')).toEqual([b.id]);
    expect((await send('GET', '/webhooks?filter[status]=paused', owner.basic)).statusCode).toBe(400);
    expect((await send('GET', '/webhooks?filter[name_contains]=%00', owner.basic)).statusCode).toBe(400);
    const gql = await ctx.graphql('query { webhooks(status: ACTIVE, nameContains: "user") { totalCount edges { node { id } } } }', {}, { authorization: owner.basic });
    expect(gql.json().data.webhooks).toEqual({ totalCount: 1, edges: [{ node: { id: c.id } }] });
  });

  it('at most 50 webhooks per account: the 51st is 422, and 60 concurrent creates leave exactly 50', async () => {
    const owner = await ctx.createUser(await ctx.createAccount(), 'admin');
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => send('POST', '/webhooks', owner.basic, { webhook: fields({ name: `Hook ${i}` }) })));
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(50);
    expect(statuses.filter((s) => s === 422)).toHaveLength(10);
    const [{ n }] = await ctx.db.sql<{ n: string }>('SELECT count(*)::text AS n FROM webhooks w JOIN users u ON u.account_id = w.account_id WHERE u.id = $1', [owner.id]);
    expect(n).toBe('50');
    const over = await send('POST', '/webhooks', owner.basic, { webhook: fields() });
    expect([over.statusCode, over.json().details]).toEqual([422, { webhooks: [{ error: 'InvalidValue', description: expect.stringContaining('at most 50 webhooks') }] }]);
    // deleting one makes room again
    expect((await send('DELETE', `/webhooks/${results.find((r) => r.statusCode === 201)!.json().webhook.id}`, owner.basic)).statusCode).toBe(204);
    expect((await send('POST', '/webhooks', owner.basic, { webhook: fields() })).statusCode).toBe(201);
  });

  describe('GraphQL: the same operations, the same rules', () => {
    const gql = (who: TestUser, query: string, variables?: Record<string, unknown>) => ctx.graphql(query, variables, { authorization: who.basic });
    const INPUT = { name: 'GraphQL hook', endpoint: 'https://hooks.example.com/g', httpMethod: 'POST', requestFormat: 'JSON', status: 'ACTIVE', subscriptions: [REVOKED] };
    const CREATE = 'mutation($input: WebhookInput!) { createWebhook(input: $input) { id name endpoint httpMethod requestFormat status subscriptions createdById } }';

    it('creates, reads, patches, replaces, shows and resets the secret, deletes', async () => {
      const created = (await gql(admin, CREATE, { input: INPUT })).json().data.createWebhook;
      expect(created).toEqual({ id: expect.any(String), name: 'GraphQL hook', endpoint: INPUT.endpoint, httpMethod: 'POST', requestFormat: 'JSON', status: 'ACTIVE', subscriptions: [REVOKED], createdById: String(admin.id) });
      const read = (await gql(admin, 'query($id: ID!) { webhook(id: $id) { name } webhooks(first: 100) { edges { node { id } } } }', { id: created.id })).json().data;
      expect(read.webhook).toEqual({ name: 'GraphQL hook' });
      expect(read.webhooks.edges.map((e: { node: { id: string } }) => e.node.id)).toContain(created.id);
      const patched = (await gql(admin, 'mutation($id: ID!) { updateWebhook(id: $id, input: { status: INACTIVE }) { status name description } }', { id: created.id })).json().data.updateWebhook;
      expect(patched).toEqual({ status: 'INACTIVE', name: 'GraphQL hook', description: null });
      const replaced = await gql(admin, 'mutation($id: ID!, $input: WebhookInput!) { updateWebhook(id: $id, input: $input, replace: true) { subscriptions } }', { id: created.id, input: { ...INPUT, subscriptions: undefined } });
      expect(replaced.json().data.updateWebhook).toEqual({ subscriptions: [] });
      const shown = (await gql(admin, 'query($id: ID!) { webhookSigningSecret(id: $id) { algorithm secret } }', { id: created.id })).json().data.webhookSigningSecret;
      const reset = (await gql(admin, 'mutation($id: ID!) { resetWebhookSigningSecret(id: $id) { algorithm secret } }', { id: created.id })).json().data.resetWebhookSigningSecret;
      expect([shown.algorithm, reset.algorithm]).toEqual(['SHA256', 'SHA256']);
      expect(reset.secret).not.toBe(shown.secret);
      expect((await gql(admin, 'mutation($id: ID!) { deleteWebhook(id: $id) }', { id: created.id })).json().data).toEqual({ deleteWebhook: true });
      expect((await gql(admin, 'query($id: ID!) { webhook(id: $id) { id } }', { id: created.id })).json().data).toEqual({ webhook: null });
    });

    it('422 as BAD_USER_INPUT with details, 403 for agents, NOT_FOUND for another account', async () => {
      const bad = (await gql(admin, CREATE, { input: { ...INPUT, subscriptions: ['zen:event-type:nope'] } })).json();
      expect(bad.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { subscriptions: [expect.objectContaining({ error: 'InvalidValue' })] } });
      const forbidden = (await gql(agent, 'query { webhooks { totalCount } }')).json();
      expect(forbidden.errors[0].extensions.code).toBe('FORBIDDEN');
      const hook = (await gql(admin, CREATE, { input: INPUT })).json().data.createWebhook;
      const other = (await gql(otherAdmin, 'query($id: ID!) { webhookSigningSecret(id: $id) { secret } }', { id: hook.id })).json();
      expect(other.errors[0].extensions.code).toBe('NOT_FOUND');
      expect((await gql(otherAdmin, 'query($id: ID!) { webhook(id: $id) { id } }', { id: hook.id })).json().data).toEqual({ webhook: null });
      const del = (await gql(otherAdmin, 'mutation($id: ID!) { deleteWebhook(id: $id) }', { id: hook.id })).json();
      expect(del.errors[0].extensions.code).toBe('NOT_FOUND');
    });
  });
});
