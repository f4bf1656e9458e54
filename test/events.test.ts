import { basicClientAuth, REDIRECT, RFC7636, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';
import type { TestUser } from './helpers/test-app';
import { eventType } from '../src/domain/events/event-types';
import { insertWebhook } from './helpers/webhook-rows';

// The events of docs/api.md, "Events": each change made through the API writes
// exactly one event (a refresh rotation two) in Zendesk's envelope, with a NOTIFY
// on channel `events` and, when an active webhook of the account subscribes to its
// type (the admin's account has one for every type), its event.published job, in
// the change's transaction. Statement counts, rollbacks and what a change that fails writes:
// test/events.atomicity.test.ts.

jest.setTimeout(120_000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  subject: string;
  detail: Record<string, any>;
  event: Record<string, any>;
  time: Date;
  zendesk_event_version: string;
}

let s: OAuthStack;
let admin: TestUser;
/** every full secret and token the API handed out: none may appear in any event */
const issued: string[] = [];
/** the event ids NOTIFY delivered on channel `events` */
const notified: string[] = [];
let unlisten: () => Promise<void>;

beforeAll(async () => {
  s = await startOAuthStack();
  admin = s.admin;
  unlisten = await s.ctx.db.listen('events', (payload) => payload !== undefined && notified.push(payload));
  // no job engine runs here: the fan-out jobs stay for the tests to read
  await insertWebhook(s.ctx.db.sql, admin.accountId);
  // and this test watches the account live, as a process with subscribers does: its events are notified
  await s.ctx.app.services.liveListeners.hold({ accountId: admin.accountId }, 'events-test');
});

afterAll(async () => {
  await unlisten();
  await s.close();
});

const allEvents = (accountId: bigint) =>
  s.ctx.db.sql<EventRow>(
    'SELECT id::text AS id, account_id::text AS account_id, type, subject, detail, event, time, zendesk_event_version FROM events WHERE account_id = $1',
    [String(accountId)],
  );

/** The events `send` wrote in the admin's account, after checking each one's envelope, job and NOTIFY. */
async function eventsOf(send: () => Promise<unknown>): Promise<EventRow[]> {
  const before = new Set((await allEvents(admin.accountId)).map((e) => e.id));
  const started = Date.now();
  await send();
  const rows = (await allEvents(admin.accountId)).filter((e) => !before.has(e.id));
  for (const row of rows) {
    expect(row.id).toMatch(UUID);
    expect(row.zendesk_event_version).toBe('2022-06-20');
    expect(row.time.getTime()).toBeGreaterThanOrEqual(started - 1000);
    expect(row.time.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    const jobs = await s.ctx.db.sql<{ account_id: string; payload: unknown }>(
      "SELECT account_id::text AS account_id, payload FROM jobs WHERE kind = 'event.published' AND payload->>'event_id' = $1",
      [row.id],
    );
    expect(jobs).toEqual([{ account_id: String(admin.accountId), payload: { event_id: row.id } }]);
  }
  const deadline = Date.now() + 5000;
  while (!rows.every((r) => notified.includes(r.id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(rows.filter((r) => !notified.includes(r.id))).toEqual([]);
  return rows;
}

/** The one event of `name` that `send` wrote, and that it wrote no other. */
async function oneEvent(name: string, send: () => Promise<unknown>): Promise<EventRow> {
  const rows = await eventsOf(send);
  expect(rows.map((r) => r.type)).toEqual([`zen:event-type:${name}`]);
  return rows[0];
}

function rest(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, who: TestUser = admin) {
  return s.ctx.inject({ method, url, headers: { authorization: who.basic }, ...(payload ? { payload } : {}) });
}

async function createClient(): Promise<Record<string, any>> {
  const res = await rest('POST', '/api/v2/oauth/clients', { name: 'Events app', company: 'Acme', client_type: 'confidential', scopes: 'read write', redirect_uris: [REDIRECT] });
  expect(res.statusCode).toBe(201);
  issued.push(res.json().client_secret);
  return res.json();
}

async function createToken(clientId: number): Promise<Record<string, any>> {
  const res = await rest('POST', '/api/v2/oauth/tokens', { token: { client_id: clientId, scopes: ['read'] } });
  expect(res.statusCode).toBe(201);
  issued.push(res.json().token.token);
  return res.json().token;
}

const withoutUrl = ({ url: _url, ...rest }: Record<string, any>) => rest;
const truncated = (secret: string) => `${secret.slice(0, 10)}...`;

describe('OAuth clients', () => {
  it('oauth_client.created: the client as REST shows it, field by field, its secret truncated', async () => {
    let created: Record<string, any> = {};
    const row = await oneEvent('oauth_client.created', async () => (created = await createClient()));
    expect(row.subject).toBe(`zen:oauth_client:${created.id}`);
    expect(row.account_id).toBe(String(admin.accountId));
    expect(row.detail).toEqual({
      id: created.id, name: 'Events app', company: 'Acme', client_identifier: created.client_identifier, client_secret: truncated(created.client_secret),
      client_type: 'confidential', redirect_uris: REDIRECT, scopes: 'read write', agent_id: Number(admin.id), create_date: created.create_date, update_date: null,
    });
    expect(row.detail).toEqual((await rest('GET', `/api/v2/oauth/clients/${created.id}`)).json());
    expect(row.event).toEqual({});
  });

  it('oauth_client.updated: the previous and current values of the fields that changed', async () => {
    const c = await createClient();
    const row = await oneEvent('oauth_client.updated', async () => expect((await rest('PUT', `/api/v2/oauth/clients/${c.id}`, { name: 'Renamed', company: 'Acme' })).statusCode).toBe(200));
    expect(row.subject).toBe(`zen:oauth_client:${c.id}`);
    expect(row.event).toEqual({ changed_fields: ['name'], previous: { name: 'Events app' }, current: { name: 'Renamed' } });
    expect(row.detail).toEqual((await rest('GET', `/api/v2/oauth/clients/${c.id}`)).json());
  });

  it('oauth_client.secret_regenerated: the new secret truncated (GraphQL)', async () => {
    const c = await createClient();
    let secret = '';
    const row = await oneEvent('oauth_client.secret_regenerated', async () => {
      const res = await s.ctx.graphql(`mutation { generateOAuthClientSecret(id: ${c.id}) { clientSecret } }`, {}, { authorization: admin.basic });
      secret = res.json().data.generateOAuthClientSecret.clientSecret;
      issued.push(secret);
    });
    expect(secret).toHaveLength(43);
    expect(row.detail.client_secret).toBe(truncated(secret));
    expect(row.event).toEqual({ grace_period: 0 });
  });

  it('oauth_client.deleted: one event, its revoked tokens counted in it (no oauth_token.revoked each)', async () => {
    const c = await createClient();
    await createToken(c.id);
    await createToken(c.id);
    const row = await oneEvent('oauth_client.deleted', async () => expect((await rest('DELETE', `/api/v2/oauth/clients/${c.id}`)).statusCode).toBe(204));
    expect(row.subject).toBe(`zen:oauth_client:${c.id}`);
    expect(row.detail).toMatchObject({ id: c.id, name: 'Events app', client_secret: truncated(c.client_secret) });
    expect(row.event).toEqual({ revoked_token_count: 2 });
  });
});

describe('OAuth tokens', () => {
  let client: Record<string, any>;
  let registered: RegisteredClient;
  beforeAll(async () => {
    client = await createClient();
    registered = await s.register({ type: 'confidential' });
    issued.push(registered.secret);
  });

  it('oauth_token.created (REST): the token as show gives it, its first 10 characters only', async () => {
    let token: Record<string, any> = {};
    const row = await oneEvent('oauth_token.created', async () => (token = await createToken(client.id)));
    expect(row.subject).toBe(`zen:oauth_token:${token.id}`);
    expect(row.detail).toEqual(withoutUrl((await rest('GET', `/api/v2/oauth/tokens/${token.id}`)).json().token));
    expect(row.detail.token).toBe(token.token.slice(0, 10));
    expect(row.detail.created_at).toMatch(ISO_SECONDS);
  });

  it('oauth_token.created (GraphQL createOAuthToken)', async () => {
    let id = '';
    const row = await oneEvent('oauth_token.created', async () => {
      const res = await s.ctx.graphql(`mutation { createOAuthToken(input: { clientId: ${client.id}, scopes: ["read"] }) { id token } }`, {}, { authorization: admin.basic });
      ({ id } = res.json().data.createOAuthToken);
      issued.push(res.json().data.createOAuthToken.token);
    });
    expect(row.subject).toBe(`zen:oauth_token:${id}`);
    expect(row.detail.scopes).toEqual(['read']);
  });

  it('oauth_token.revoked (REST DELETE)', async () => {
    const token = await createToken(client.id);
    const shown = withoutUrl((await rest('GET', `/api/v2/oauth/tokens/${token.id}`)).json().token);
    const row = await oneEvent('oauth_token.revoked', async () => expect((await rest('DELETE', `/api/v2/oauth/tokens/${token.id}`)).statusCode).toBe(204));
    expect(row.subject).toBe(`zen:oauth_token:${token.id}`);
    expect(row.detail).toEqual(shown);
  });

  it('oauth_token.created at the token endpoint (client_credentials)', async () => {
    let access = '';
    const row = await oneEvent('oauth_token.created', async () => {
      const res = await s.post('/oauth/tokens', { grant_type: 'client_credentials' }, { authorization: basicClientAuth(registered.identifier, registered.secret) });
      expect(res.status).toBe(200);
      access = res.body.access_token;
      issued.push(access);
    });
    expect(row.detail.token).toBe(access.slice(0, 10));
    expect(row.detail.client_id).toBe(registered.id);
  });

  it('a refresh rotation: oauth_token.created for the new token, oauth_token.revoked for the one it replaced', async () => {
    const auth = { authorization: basicClientAuth(registered.identifier, registered.secret) };
    const code = (await s.authorize(registered, { verifier: RFC7636.verifier })).get('code')!;
    const first = await s.post('/oauth/tokens', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier }, auth);
    expect(first.status).toBe(200);
    issued.push(first.body.access_token, first.body.refresh_token);
    const oldId = (await s.current(first.body.access_token)).body.token.id;
    let next: Record<string, any> = {};
    const rows = await eventsOf(async () => {
      next = (await s.post('/oauth/tokens', { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth)).body;
      issued.push(next.access_token, next.refresh_token);
    });
    const newId = (await s.current(next.access_token)).body.token.id;
    const byType = Object.fromEntries(rows.map((r) => [r.type, r]));
    expect(rows).toHaveLength(2);
    expect(byType['zen:event-type:oauth_token.created']).toMatchObject({ subject: `zen:oauth_token:${newId}`, event: { rotated_token_id: oldId } });
    expect(byType['zen:event-type:oauth_token.created'].detail).toMatchObject({ token: next.access_token.slice(0, 10), refresh_token: next.refresh_token.slice(0, 10) });
    expect(byType['zen:event-type:oauth_token.revoked']).toMatchObject({ subject: `zen:oauth_token:${oldId}`, detail: { id: oldId, token: first.body.access_token.slice(0, 10) } });
  });

  it('/oauth/revoke of a refresh token: oauth_token.revoked for the token of its family, as show gave it', async () => {
    const auth = { authorization: basicClientAuth(registered.identifier, registered.secret) };
    const code = (await s.authorize(registered, { verifier: RFC7636.verifier })).get('code')!;
    const issuedNow = (await s.post('/oauth/tokens', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier }, auth)).body;
    issued.push(issuedNow.access_token, issuedNow.refresh_token);
    const shown = withoutUrl((await s.current(issuedNow.access_token)).body.token);
    const row = await oneEvent('oauth_token.revoked', async () => expect((await s.post('/oauth/revoke', { token: issuedNow.refresh_token }, auth)).status).toBe(200));
    expect(row.subject).toBe(`zen:oauth_token:${shown.id}`);
    expect(row.detail).toEqual(shown);
  });
});

describe('users', () => {
  it('user.created, user.updated and user.deleted, each the user as REST shows it', async () => {
    let user: Record<string, any> = {};
    const created = await oneEvent('user.created', async () => {
      const res = await rest('POST', '/api/v2/users', { user: { name: 'Eve Events', email: 'eve.events@example.com', role: 'agent' } });
      expect(res.statusCode).toBe(201);
      user = res.json().user;
    });
    expect(created.subject).toBe(`zen:user:${user.id}`);
    expect(created.detail).toEqual(withoutUrl(user));

    const updated = await oneEvent('user.updated', async () => {
      const res = await rest('PUT', `/api/v2/users/${user.id}`, { user: { name: 'Eve Renamed' } });
      expect(res.statusCode).toBe(200);
      user = res.json().user;
    });
    expect(updated.detail).toEqual(withoutUrl(user));
    expect(updated.event).toEqual({ changed_fields: ['name'], previous: { name: 'Eve Events' }, current: { name: 'Eve Renamed' } });

    const deleted = await oneEvent('user.deleted', async () => expect((await rest('DELETE', `/api/v2/users/${user.id}`)).statusCode).toBe(200));
    expect(deleted.subject).toBe(`zen:user:${user.id}`);
    expect(deleted.detail).toMatchObject({ id: user.id, active: false });
    expect(deleted.event).toEqual({ revoked_token_count: 0 });
  });

  it('a password change is a user.updated naming the field, never its value', async () => {
    const user = await s.ctx.createUser(admin.accountId, 'agent');
    const row = await oneEvent('user.updated', async () =>
      expect((await rest('PUT', `/api/v2/users/${user.id}/password`, { password: 'a-new-password-123' })).statusCode).toBe(200));
    expect(row.event).toEqual({ changed_fields: ['password'], previous: {}, current: {}, revoked_token_count: 0 });
    expect(JSON.stringify(row)).not.toContain('a-new-password-123');
  });
});

describe('callback requests', () => {
  it('callback_request.created: the stored request', async () => {
    const agent = s.agent;
    const phone = await s.ctx.db.prisma.voicePhoneNumber.create({ data: { accountId: admin.accountId, number: '+12518717999' } });
    const group = await s.ctx.db.prisma.group.create({ data: { accountId: admin.accountId, name: 'events' } });
    const row = await oneEvent('callback_request.created', async () => {
      const res = await rest('POST', '/api/v2/channels/voice/callback_requests', {
        callback_request: { phone_number_id: Number(phone.id), requester_phone_number: '+14155550123', group_ids: [Number(group.id)] },
      }, agent);
      expect(res.statusCode).toBe(201);
    });
    const [stored] = await s.ctx.db.prisma.callbackRequest.findMany({ where: { accountId: admin.accountId } });
    expect(row.subject).toBe(`zen:callback_request:${stored.id}`);
    expect(row.detail).toEqual({
      id: Number(stored.id), phone_number_id: Number(phone.id), requester_phone_number: '+14155550123', requested_group_ids: [Number(group.id)],
      routed_group_ids: [Number(group.id)], status: 'queued', queue_position: 1, created_by_id: Number(agent.id),
      created_at: stored.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
  });
});

describe('the fan-out job is written only for a subscribed, active webhook', () => {
  it('an account without one gets the event and its NOTIFY, but no job; with one, each event of a subscribed type gets its job', async () => {
    const account = await s.ctx.createAccount();
    const owner = await s.ctx.createUser(account, 'admin');
    await s.ctx.app.services.liveListeners.hold({ accountId: account }, 'events-test');
    const jobsOf = async () => (await s.ctx.db.sql<{ event_id: string }>(
      "SELECT payload->>'event_id' AS event_id FROM jobs WHERE kind = 'event.published' AND account_id = $1", [String(account)],
    )).map((j) => j.event_id);
    const created = async (name: string) => {
      const res = await rest('POST', '/api/v2/oauth/clients', { name, scopes: 'read', redirect_uris: [REDIRECT] }, owner);
      expect(res.statusCode).toBe(201);
      const [row] = await s.ctx.db.sql<{ id: string }>('SELECT id::text AS id FROM events WHERE account_id = $1 AND subject = $2', [String(account), `zen:oauth_client:${res.json().id}`]);
      const deadline = Date.now() + 5000;
      while (!notified.includes(row.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(notified).toContain(row.id);
      return row.id;
    };
    await created('No webhook');
    // another account's webhook, an inactive one, and one subscribed to other types write no job either
    await insertWebhook(s.ctx.db.sql, account, [eventType('oauth_client.created')], 'inactive');
    await insertWebhook(s.ctx.db.sql, account, [eventType('oauth_client.deleted'), eventType('user.created')]);
    await created('Not subscribed');
    expect(await jobsOf()).toEqual([]);
    await insertWebhook(s.ctx.db.sql, account, [eventType('oauth_client.created')]);
    const subscribed = await created('Subscribed');
    expect(await jobsOf()).toEqual([subscribed]);
  });
});

describe('the NOTIFY is sent only for an account some process watches live', () => {
  const createdEvent = async (owner: TestUser) => {
    const res = await rest('POST', '/api/v2/oauth/clients', { name: 'Watched?', scopes: 'read', redirect_uris: [REDIRECT] }, owner);
    expect(res.statusCode).toBe(201);
    const [row] = await s.ctx.db.sql<{ id: string }>('SELECT id::text AS id FROM events WHERE subject = $1', [`zen:oauth_client:${res.json().id}`]);
    return row.id;
  };
  /** Whether the event's NOTIFY arrives (a NOTIFY of a later event proves the earlier one would have come by then). */
  const arrives = async (id: string, owner: TestUser) => {
    const marker = await createdEvent(owner);
    const deadline = Date.now() + 5000;
    while (!notified.includes(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(notified).toContain(marker);
    return notified.includes(id);
  };

  it('not watched: the event is written (webhooks still get it) but not notified; watched: notified; released or expired: not any more', async () => {
    const quiet = await s.ctx.createAccount();
    const owner = await s.ctx.createUser(quiet, 'admin');
    const listeners = s.ctx.app.services.liveListeners;
    // the marker's account is watched all along
    const markers = await s.ctx.createUser(admin.accountId, 'admin');
    const unwatched = await createdEvent(owner);
    expect(await arrives(unwatched, markers)).toBe(false);
    await listeners.hold({ accountId: quiet }, 'events-test');
    const watched = await createdEvent(owner);
    expect(await arrives(watched, markers)).toBe(true);
    await listeners.release({ accountId: quiet }, 'events-test');
    const released = await createdEvent(owner);
    expect(await arrives(released, markers)).toBe(false);
    // a process that died holds a row that expires (LIVE_LISTENER_SECONDS): once over, nothing is notified
    await s.ctx.db.sql("INSERT INTO live_event_listeners (account_id, listener, expires_at) VALUES ($1, 'gone', now() - interval '1 second')", [String(quiet)]);
    const expired = await createdEvent(owner);
    expect(await arrives(expired, markers)).toBe(false);
    // holding again removes the account's expired rows
    await listeners.hold({ accountId: quiet }, 'events-test');
    expect(await s.ctx.db.sql('SELECT listener FROM live_event_listeners WHERE account_id = $1', [String(quiet)])).toEqual([{ listener: 'events-test' }]);
  });
});

// last: every event written above
it('no event holds a full secret or token the API handed out', async () => {
  const rows = await s.ctx.db.sql<{ row: string }>('SELECT to_jsonb(e)::text AS row FROM events e');
  expect(rows.length).toBeGreaterThan(10);
  expect(issued.length).toBeGreaterThan(10);
  const text = rows.map((r) => r.row).join('\n');
  expect(issued.filter((secret) => text.includes(secret))).toEqual([]);
});
