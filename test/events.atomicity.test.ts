import { basicClientAuth, REDIRECT, startOAuthStack, type OAuthStack } from './helpers/oauth-server';
import { createTestApp, type TestUser } from './helpers/test-app';
import { insertWebhook } from './helpers/webhook-rows';

// docs/api.md, "Events": an event is written in the transaction of its change,
// so a change that rolls back leaves no event, no event.published job and no
// NOTIFY; and writing it costs the hot token paths no statement.

jest.setTimeout(120_000);

let s: OAuthStack;
const notified: string[] = [];
let unlisten: () => Promise<void>;

beforeAll(async () => {
  s = await startOAuthStack();
  unlisten = await s.ctx.db.listen('events', (payload) => payload !== undefined && notified.push(payload));
});

afterAll(async () => {
  await unlisten();
  await s.close();
});

const count = async (table: string, accountId: bigint) =>
  Number((await s.ctx.db.sql<{ n: string }>(`SELECT count(*)::text AS n FROM ${table} WHERE account_id = $1`, [String(accountId)]))[0].n);
const traces = async (accountId: bigint) => ({
  events: await count('events', accountId),
  jobs: await count('jobs', accountId),
  audit_logs: await count('audit_logs', accountId),
  oauth_clients: await count('oauth_clients', accountId),
  oauth_tokens: await count('oauth_tokens', accountId),
  users: await count('users', accountId),
});

const rest = (who: TestUser, method: 'POST' | 'PUT' | 'DELETE', url: string, payload: object) =>
  s.ctx.inject({ method, url, headers: { authorization: who.basic }, payload });
const CLIENT = { name: 'Atomic', client_type: 'confidential', scopes: 'read write', redirect_uris: [REDIRECT] };

describe('a change that rolls back writes no event', () => {
  it('when the last write of the change (its event.published job) fails, the change, its audit record and its event all roll back', async () => {
    const account = await s.ctx.createAccount();
    const admin = await s.ctx.createUser(account, 'admin');
    // a subscribed webhook: each event's statement then ends with its fan-out job; watched live: notified
    await insertWebhook(s.ctx.db.sql, account);
    await s.ctx.app.services.liveListeners.hold({ accountId: account }, 'atomicity-test');
    const client = (await rest(admin, 'POST', '/api/v2/oauth/clients', CLIENT)).json();
    const before = await traces(account);
    const notifiedBefore = notified.length;
    // the account's jobs are refused: the statement that writes the event fails after it
    await s.ctx.db.sql("CREATE FUNCTION events_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused (test)'; END $$");
    await s.ctx.db.sql(`CREATE TRIGGER events_test_refuse BEFORE INSERT ON jobs FOR EACH ROW WHEN (NEW.account_id = ${Number(account)}) EXECUTE FUNCTION events_test_refuse()`);
    try {
      // recordAudit's statement (a transaction of several statements)
      expect((await rest(admin, 'POST', '/api/v2/oauth/clients', CLIENT)).statusCode).toBe(500);
      expect((await rest(admin, 'PUT', `/api/v2/oauth/clients/${client.id}`, { name: 'Renamed' })).statusCode).toBe(500);
      expect((await rest(admin, 'POST', '/api/v2/users', { user: { name: 'Never', email: 'never@example.com' } })).statusCode).toBe(500);
      // the one-statement token paths
      expect((await rest(admin, 'POST', '/api/v2/oauth/tokens', { token: { client_id: client.id, scopes: ['read'] } })).statusCode).toBe(500);
      const grant = await s.post('/oauth/tokens', { grant_type: 'client_credentials' }, { authorization: basicClientAuth(client.client_identifier, client.client_secret) });
      expect(grant.status).toBe(500);
      expect(await traces(account)).toEqual(before);
      expect((await s.ctx.db.sql<{ name: string }>('SELECT name FROM oauth_clients WHERE id = $1', [client.id]))[0].name).toBe('Atomic');
    } finally {
      await s.ctx.db.sql('DROP TRIGGER events_test_refuse ON jobs');
      await s.ctx.db.sql('DROP FUNCTION events_test_refuse()');
    }
    // the same change now commits, with its event: the notifications before were none
    expect((await rest(admin, 'PUT', `/api/v2/oauth/clients/${client.id}`, { name: 'Renamed' })).statusCode).toBe(200);
    const [event] = await s.ctx.db.sql<{ id: string }>("SELECT id::text AS id FROM events WHERE account_id = $1 AND type = 'zen:event-type:oauth_client.updated'", [String(account)]);
    const deadline = Date.now() + 5000;
    while (!notified.includes(event.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(notified.slice(notifiedBefore)).toEqual([event.id]);
  });

  it('a user whose email is taken (422) writes no event and no job', async () => {
    const account = await s.ctx.createAccount();
    const admin = await s.ctx.createUser(account, 'admin');
    const before = await traces(account);
    const res = await rest(admin, 'POST', '/api/v2/users', { user: { name: 'Twin', email: admin.email } });
    expect(res.statusCode).toBe(422);
    expect(await traces(account)).toEqual(before);
  });

  it('a callback request over the rate limit (429) writes no event and no job', async () => {
    const ctx = await createTestApp({ limits: { callbackRequests: 1 } });
    try {
      const account = await ctx.createAccount();
      const agent = await ctx.createUser(account, 'agent');
      const phone = await ctx.db.prisma.voicePhoneNumber.create({ data: { accountId: account, number: '+12518717998' } });
      await insertWebhook(ctx.db.sql, account);
      const send = () => ctx.inject({
        method: 'POST', url: '/api/v2/channels/voice/callback_requests', headers: { authorization: agent.basic },
        payload: { callback_request: { phone_number_id: Number(phone.id), requester_phone_number: '+14155550124' } },
      });
      const eventsOf = () => ctx.db.sql<{ type: string }>('SELECT type FROM events WHERE account_id = $1', [String(account)]);
      const jobsOf = () => ctx.db.sql<{ kind: string }>('SELECT kind FROM jobs WHERE account_id = $1', [String(account)]);
      expect((await send()).statusCode).toBe(201);
      expect((await send()).statusCode).toBe(429);
      expect(await eventsOf()).toEqual([{ type: 'zen:event-type:callback_request.created' }]);
      expect(await jobsOf()).toEqual([{ kind: 'event.published' }]);
    } finally {
      await ctx.close();
    }
  });
});

describe('what an event costs the hot token paths', () => {
  // The counts of i22, before events (test/audit-log.coverage.test.ts asserts them too):
  // authentication (1) + the change with its record, now also its event, job and NOTIFY (1); the
  // client_credentials grant's client comes from the grant cache (issue 26): the grant alone (1).
  it('a token create keeps two statements, a client_credentials grant one', async () => {
    const admin = s.admin;
    const client = await s.register({ type: 'confidential' });
    const counted = async (send: () => Promise<void>) => {
      const before = s.ctx.db.statementCount();
      await send();
      return s.ctx.db.statementCount() - before;
    };
    const createToken = async () => expect((await rest(admin, 'POST', '/api/v2/oauth/tokens', { token: { client_id: client.id, scopes: ['read'] } })).statusCode).toBe(201);
    const createTokenGraphQL = async () => {
      const res = await s.ctx.graphql(`mutation { createOAuthToken(input: { clientId: ${client.id}, scopes: ["read"] }) { id } }`, {}, { authorization: admin.basic });
      expect(res.json().errors).toBeUndefined();
    };
    const grant = async () =>
      expect((await s.post('/oauth/tokens', { grant_type: 'client_credentials' }, { authorization: basicClientAuth(client.identifier, client.secret) })).status).toBe(200);
    // warm: the Basic cache, and the secret's last use (recorded once a minute)
    await createToken();
    await grant();
    const eventsBefore = await count('events', admin.accountId);
    expect({
      rest: await counted(createToken), graphql: await counted(createTokenGraphQL), clientCredentials: await counted(grant),
    }).toEqual({ rest: 2, graphql: 2, clientCredentials: 1 });
    expect(await count('events', admin.accountId)).toBe(eventsBefore + 3);
  });
});
