import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobEngine } from '../src/jobs/engine';
import { createJobEngine } from '../src/jobs/kinds';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "The callback lifecycle": agents go online, offers go out in queue order to
// the agent idle longest, accept → dialing (the event reaches a signed webhook) → outcome →
// completed, with the queue's positions and Talk's stats moving at every step; offers that
// time out or are declined go to the next agent; no answer retries, then fails; cancel; and
// other accounts see nothing. All through REST, with the job engine running the timers.

jest.setTimeout(90_000);

const CB = '/channels/voice/callback_requests';
const DIALING = 'zen:event-type:callback_request.dialing';

interface Tenant {
  accountId: bigint;
  admin: TestUser;
  agents: TestUser[];
  endUser: TestUser;
  phoneId: number;
  phoneNumber: string;
  groupId: number;
}

interface Received { body: string; signature: string; timestamp: string }

async function receiver() {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ body, signature: String(req.headers['x-zendesk-webhook-signature']), timestamp: String(req.headers['x-zendesk-webhook-signature-timestamp']) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/talk`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('the callback lifecycle (docs/api.md, "The callback lifecycle")', () => {
  let ctx: TestContext;
  let engine: JobEngine;
  let numbers = 0;

  beforeAll(async () => {
    ctx = await createTestApp();
    engine = createJobEngine(ctx.db, ctx.app.services, { pollSeconds: 0.1 });
    await engine.start();
  });
  afterAll(async () => {
    await engine.stop();
    await ctx.close();
  });

  const rest = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, who: TestUser, payload?: object) =>
    ctx.inject({ method, url: `/api/v2${url}`, headers: payload ? { authorization: who.basic, 'content-type': 'application/json' } : { authorization: who.basic }, payload });
  const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, who: TestUser, payload?: object, status = 200) => {
    const res = await rest(method, url, who, payload);
    if (res.statusCode !== status) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.statusCode === 204 || res.body === '' ? null : res.json();
  };
  const until = async <T>(what: string, check: () => Promise<T | false | undefined | null>, ms = 10_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const got = await check();
      if (got) return got;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  /** An account with an admin, `n` agents in one group, an end user and a phone number; settings as given. */
  async function tenant(n: number, settings: Record<string, number> = {}): Promise<Tenant> {
    const accountId = await ctx.createAccount();
    const admin = await ctx.createUser(accountId, 'admin');
    const agents: TestUser[] = [];
    for (let i = 0; i < n; i++) agents.push(await ctx.createUser(accountId, 'agent'));
    const endUser = await ctx.createUser(accountId, 'end_user');
    const phoneNumber = `+1415555${String(1000 + ++numbers).padStart(4, '0')}`;
    const phone = await ok('POST', '/channels/voice/phone_numbers', admin, { phone_number: { number: phoneNumber } }, 201);
    const group = await ok('POST', '/groups', admin, { group: { name: 'Callbacks' } }, 201);
    for (const agent of agents) {
      await ok('POST', '/group_memberships', admin, { group_membership: { user_id: Number(agent.id), group_id: group.group.id } }, 201);
    }
    if (Object.keys(settings).length > 0) await ok('PUT', '/account/settings', admin, { settings });
    return { accountId, admin, agents, endUser, phoneId: phone.phone_number.id, phoneNumber, groupId: group.group.id };
  }
  const create = async (t: Tenant, who: TestUser, requester: string) => {
    const res = await rest('POST', CB, who, { callback_request: { phone_number_id: t.phoneId, requester_phone_number: requester, group_ids: [t.groupId] } });
    expect(res.statusCode).toBe(201);
    expect(res.body).toBe('');
    const id = Number(/\/callback_requests\/(\d+)\.json$/.exec(String(res.headers.location))![1]);
    return id;
  };
  const show = async (t: Tenant, id: number) => (await ok('GET', `${CB}/${id}`, t.admin)).callback_request;
  const online = (t: Tenant, agent: TestUser, state = 'online') => ok('PUT', `/channels/voice/availabilities/${agent.id}`, agent, { availability: { agent_state: state } });
  const queue = async (t: Tenant) => (await ok('GET', '/channels/voice/stats/current_queue_activity', t.admin)).current_queue_activity;
  const positions = async (t: Tenant) =>
    Object.fromEntries((await ok('GET', `${CB}?status=queued`, t.admin)).callback_requests.map((r: { id: number; queue_position: number }) => [r.id, r.queue_position]));

  it('three agents, one group, five callbacks: offers in order, accept → dialing (webhook) → answered → completed; positions and queue activity follow', async () => {
    const t = await tenant(3);
    const hook = await receiver();
    const webhook = await ok('POST', '/webhooks', t.admin, {
      webhook: { name: 'Telephony', endpoint: hook.url, http_method: 'POST', request_format: 'json', status: 'active', subscriptions: [DIALING] },
    }, 201);
    const secret = (await ok('GET', `/webhooks/${webhook.webhook.id}/signing_secret`, t.admin)).signing_secret.secret as string;
    try {
      const [a, b, c] = t.agents;
      // new agents are offline, without a call
      expect(await ok('GET', `/channels/voice/availabilities/${a.id}`, b)).toEqual({ availability: { agent_state: 'offline', call_status: null, via: null } });

      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push(await create(t, t.admin, `+1251871708${i}`));
      expect(await positions(t)).toEqual({ [ids[0]]: 1, [ids[1]]: 2, [ids[2]]: 3, [ids[3]]: 4, [ids[4]]: 5 });
      expect(await queue(t)).toMatchObject({ agents_online: 0, callbacks_waiting: 5, calls_waiting: 0 });
      // the list pages forward only: links.next leads on; links.prev stays null (there is no page[before] to lead back with)
      const page1 = await ok('GET', `${CB}?page[size]=2`, t.admin);
      const page2 = await ok('GET', page1.links.next.replace(/^https?:\/\/[^/]+\/api\/v2/, ''), t.admin);
      expect(page2.callback_requests.map((r: { id: number }) => r.id)).toEqual([ids[2], ids[3]]);
      expect([page1.links.prev, page2.links.prev]).toEqual([null, null]);

      // agents come online one after another: each gets the next request in queue order
      expect(await online(t, a)).toEqual({ availability: { agent_state: 'online', call_status: null, via: 'client' } });
      expect(await show(t, ids[0])).toMatchObject({ status: 'offered', agent_id: Number(a.id), queue_position: null });
      await online(t, b);
      await online(t, c);
      expect((await show(t, ids[1])).agent_id).toBe(Number(b.id));
      expect((await show(t, ids[2])).agent_id).toBe(Number(c.id));
      expect(await positions(t)).toEqual({ [ids[3]]: 1, [ids[4]]: 2 });
      expect(await queue(t)).toMatchObject({ agents_online: 3, callbacks_waiting: 5 });

      // another agent cannot take A's offer; A accepts: dialing, A on a call
      expect((await rest('POST', `${CB}/${ids[0]}/accept`, b)).statusCode).toBe(409);
      const accepted = (await ok('POST', `${CB}/${ids[0]}/accept`, a)).callback_request;
      expect(accepted).toMatchObject({ status: 'dialing', agent_id: Number(a.id), attempts: 1 });
      expect(accepted.history.map((h: { status: string }) => h.status)).toEqual(['offered', 'accepted', 'dialing']);
      expect((await ok('GET', `/channels/voice/availabilities/${a.id}`, a)).availability.call_status).toBe('on_call');
      expect(await queue(t)).toMatchObject({ callbacks_waiting: 4 });

      // the telephony integration gets the dial, signed: whom to call, from which number, for which agent
      const delivered = await until('the dialing webhook', async () => hook.received.find((r) => JSON.parse(r.body).subject === `zen:callback_request:${ids[0]}`));
      const expected = createHmac('sha256', secret).update(delivered.timestamp + delivered.body).digest('base64');
      expect(delivered.signature).toBe(expected);
      const event = JSON.parse(delivered.body);
      expect(event.type).toBe(DIALING);
      expect(event.event.dial).toEqual({ to: '+12518717080', from: t.phoneNumber, phone_number_id: t.phoneId, attempt: 1, agent: { id: Number(a.id), name: expect.any(String), email: a.email } });

      // answered: completed; A is free at once (no wrap-up) and gets the next request, #4
      const done = (await ok('POST', `${CB}/${ids[0]}/outcome`, a, { outcome: 'answered' })).callback_request;
      expect(done).toMatchObject({ status: 'completed', agent_id: Number(a.id) });
      expect(done.completed_at).toEqual(expect.any(String));
      expect(await show(t, ids[3])).toMatchObject({ status: 'offered', agent_id: Number(a.id) });
      expect(await positions(t)).toEqual({ [ids[4]]: 1 });

      // everyone finishes: every request completed exactly once
      for (const [agent, id] of [[b, ids[1]], [c, ids[2]], [a, ids[3]]] as const) {
        await ok('POST', `${CB}/${id}/accept`, agent);
        await ok('POST', `${CB}/${id}/outcome`, agent, { outcome: 'answered' });
      }
      const last = await show(t, ids[4]);
      expect(last.status).toBe('offered');
      const lastAgent = t.agents.find((u) => Number(u.id) === last.agent_id)!;
      await ok('POST', `${CB}/${ids[4]}/accept`, lastAgent);
      await ok('POST', `${CB}/${ids[4]}/outcome`, lastAgent, { outcome: 'answered' });
      const all = (await ok('GET', CB, t.admin)).callback_requests;
      expect(all.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
      expect(await queue(t)).toMatchObject({ agents_online: 3, callbacks_waiting: 0, average_wait_time: 0, longest_wait_time: 0 });
      const activity = (await ok('GET', '/channels/voice/stats/agents_activity', t.admin)).agents_activity;
      const completed = Object.fromEntries(activity.map((r: { agent_id: number; callbacks_completed: number }) => [r.agent_id, r.callbacks_completed]));
      expect(completed[Number(a.id)]).toBeGreaterThanOrEqual(2);
      expect(completed[Number(a.id)] + completed[Number(b.id)] + completed[Number(c.id)]).toBe(5);
      // the admin appears too, never online
      expect(activity.find((r: { agent_id: number }) => r.agent_id === Number(t.admin.id))).toMatchObject({ agent_state: 'offline', callbacks_completed: 0 });
      // each transition is audited
      const audits = await ctx.db.prisma.auditLog.count({ where: { accountId: t.accountId, sourceType: 'callback_request' } });
      expect(audits).toBe(5 * 4); // offered, accepted, dialing, completed
    } finally {
      await hook.close();
    }
  });

  it('an offer not accepted in time goes to the next agent, and counts as missed; a decline goes on; nobody gets it twice before everyone had it', async () => {
    const t = await tenant(3, { callback_offer_timeout: 1 });
    const [a, b, c] = t.agents;
    await online(t, a);
    await online(t, b);
    await online(t, c);
    const id = await create(t, t.admin, '+12518717090');
    const first = await show(t, id);
    expect(first.status).toBe('offered');
    // the first agent online has been idle longest
    expect(first.agent_id).toBe(Number(a.id));
    const second = await until('the offer to move on', async () => {
      const r = await show(t, id);
      return r.agent_id !== Number(a.id) && r.status === 'offered' && r;
    });
    expect(second.agent_id).toBe(Number(b.id));
    expect(second.history.map((h: { status: string }) => h.status)).toEqual(['offered', 'queued', 'offered']);
    // B declines: C, who was not offered it yet, gets it (not A again)
    await ok('POST', `${CB}/${id}/decline`, b);
    expect(await show(t, id)).toMatchObject({ status: 'offered', agent_id: Number(c.id) });
    const activity = (await ok('GET', '/channels/voice/stats/agents_activity', t.admin)).agents_activity;
    const missed = Object.fromEntries(activity.map((r: { agent_id: number; calls_missed: number }) => [r.agent_id, r.calls_missed]));
    expect([missed[Number(a.id)], missed[Number(b.id)], missed[Number(c.id)]]).toEqual([1, 0, 0]);
    // a declined offer is not accepted later: 409
    expect((await rest('POST', `${CB}/${id}/accept`, b)).statusCode).toBe(409);
    // C lets it expire too: every eligible agent had it, a new round starts with the one idle longest
    const again = await until('a new round', async () => {
      const r = await show(t, id);
      return r.history.length >= 7 && r.status === 'offered' && r;
    });
    expect([Number(a.id), Number(b.id)]).toContain(again.agent_id);
  });

  it('an agent who goes away loses a pending offer at once, without a miss', async () => {
    const t = await tenant(2);
    const [a, b] = t.agents;
    await online(t, a);
    const id = await create(t, t.admin, '+12518717091');
    expect((await show(t, id)).agent_id).toBe(Number(a.id));
    await online(t, b);
    await online(t, a, 'away');
    const moved = await show(t, id);
    expect(moved).toMatchObject({ status: 'offered', agent_id: Number(b.id) });
    const rescinded = await ctx.db.prisma.callbackRequestHistory.findMany({ where: { callbackRequestId: BigInt(id) }, orderBy: { id: 'asc' } });
    expect(rescinded.map((h) => h.reason)).toEqual([null, 'rescinded', null]);
    const activity = (await ok('GET', '/channels/voice/stats/agents_activity', t.admin)).agents_activity;
    expect(activity.find((r: { agent_id: number }) => r.agent_id === Number(a.id))).toMatchObject({ agent_state: 'away', calls_missed: 0 });
  });

  it('no answer: back in the queue after the retry delay, then failed once the attempts are used up; wrap-up holds the next offer', async () => {
    const t = await tenant(1, { callback_retry_delay: 1, callback_max_attempts: 2, wrap_up_time: 1 });
    const [a] = t.agents;
    await online(t, a);
    const id = await create(t, t.admin, '+12518717092');
    await ok('POST', `${CB}/${id}/accept`, a);
    const requeued = (await ok('POST', `${CB}/${id}/outcome`, a, { outcome: 'no_answer' })).callback_request;
    expect(requeued).toMatchObject({ status: 'queued', agent_id: null, attempts: 1 });
    expect((await ok('GET', `/channels/voice/availabilities/${a.id}`, a)).availability.call_status).toBe('wrap_up');
    const startedAt = Date.now();
    const offered = await until('the retry', async () => {
      const r = await show(t, id);
      return r.status === 'offered' && r;
    });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(800);
    expect(offered.agent_id).toBe(Number(a.id));
    expect((await ok('GET', `/channels/voice/availabilities/${a.id}`, a)).availability.call_status).toBeNull();
    await ok('POST', `${CB}/${id}/accept`, a);
    const failed = (await ok('POST', `${CB}/${id}/outcome`, a, { outcome: 'busy' })).callback_request;
    expect(failed).toMatchObject({ status: 'failed', attempts: 2 });
    expect(failed.history.map((h: { status: string }) => h.status)).toEqual(['offered', 'accepted', 'dialing', 'queued', 'offered', 'accepted', 'dialing', 'failed']);
    // an outcome of a request that is not dialing: 409; a wrong outcome: 422
    expect((await rest('POST', `${CB}/${id}/outcome`, a, { outcome: 'answered' })).statusCode).toBe(409);
    const bad = await rest('POST', `${CB}/${id}/outcome`, a, { outcome: 'maybe' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details.outcome[0].error).toBe('InvalidValue');
    // no outcome (an empty object, null): 422 BlankValue, not a 500
    for (const payload of [{}, { outcome: null }]) {
      const blank = await rest('POST', `${CB}/${id}/outcome`, a, payload);
      expect({ status: blank.statusCode, details: blank.json().details }).toEqual({ status: 422, details: { outcome: [{ error: 'BlankValue', description: 'Outcome: cannot be blank' }] } });
    }
  });

  it('cancel: the creator or an admin, while not over; the agent loses the offer; other agents 403, ended requests 409', async () => {
    const t = await tenant(2);
    const [a, b] = t.agents;
    const mine = await create(t, a, '+12518717093');
    const other = await create(t, t.admin, '+12518717094');
    expect((await rest('DELETE', `${CB}/${mine}`, b)).statusCode).toBe(403);
    expect((await rest('DELETE', `${CB}/${other}`, a)).statusCode).toBe(403);
    expect((await rest('DELETE', `${CB}/${mine}`, a)).statusCode).toBe(204);
    expect(await show(t, mine)).toMatchObject({ status: 'cancelled', queue_position: null });
    expect(await positions(t)).toEqual({ [other]: 1 });
    expect((await rest('DELETE', `${CB}/${mine}`, a)).statusCode).toBe(409);
    // cancelling an offered request frees its agent, who gets nothing else (the queue is empty)
    await online(t, b);
    expect((await show(t, other)).agent_id).toBe(Number(b.id));
    expect((await rest('DELETE', `${CB}/${other}`, t.admin)).statusCode).toBe(204);
    const offeredAgain = await create(t, t.admin, '+12518717095');
    expect(await show(t, offeredAgain)).toMatchObject({ status: 'offered', agent_id: Number(b.id) });
  });

  it('roles and accounts: end users 403, another agent\'s availability 403, other accounts\' ids 404 everywhere', async () => {
    const t = await tenant(2);
    const u = await tenant(1);
    const [a, b] = t.agents;
    const id = await create(t, t.admin, '+12518717096');
    expect((await rest('GET', `/channels/voice/availabilities/${a.id}`, t.endUser)).statusCode).toBe(403);
    expect((await rest('PUT', `/channels/voice/availabilities/${t.endUser.id}`, t.endUser, { availability: { agent_state: 'online' } })).statusCode).toBe(403);
    expect((await rest('PUT', `/channels/voice/availabilities/${b.id}`, a, { availability: { agent_state: 'online' } })).statusCode).toBe(403);
    expect((await rest('PUT', `/channels/voice/availabilities/${b.id}`, t.admin, { availability: { agent_state: 'away' } })).statusCode).toBe(200);
    const invalid = await rest('PUT', `/channels/voice/availabilities/${a.id}`, a, { availability: { agent_state: 'sleeping' } });
    expect(invalid.statusCode).toBe(422);
    // agent_state absent or null: the domain's 422 BlankValue (the operation's non-null argument once made this a 500)
    for (const availability of [{}, { agent_state: null }]) {
      const blank = await rest('PUT', `/channels/voice/availabilities/${a.id}`, a, { availability });
      expect({ status: blank.statusCode, details: blank.json().details }).toEqual({ status: 422, details: { agent_state: [{ error: 'BlankValue', description: 'Agent state: cannot be blank' }] } });
    }
    // an end user is not an agent: 404, as another account's agent
    expect((await rest('GET', `/channels/voice/availabilities/${t.endUser.id}`, a)).statusCode).toBe(404);
    const other = u.agents[0];
    for (const [method, url, body] of [
      ['GET', `/channels/voice/availabilities/${a.id}`, undefined],
      ['PUT', `/channels/voice/availabilities/${a.id}`, { availability: { agent_state: 'online' } }],
      ['GET', `${CB}/${id}`, undefined],
      ['POST', `${CB}/${id}/accept`, {}],
      ['POST', `${CB}/${id}/decline`, {}],
      ['POST', `${CB}/${id}/outcome`, { outcome: 'answered' }],
      ['DELETE', `${CB}/${id}`, undefined],
    ] as const) {
      const res = await rest(method, url, method === 'PUT' ? u.admin : other, body);
      expect({ url, method, status: res.statusCode, body: res.json() }).toEqual({ url, method, status: 404, body: { error: 'RecordNotFound', description: 'Not found' } });
    }
    expect((await ok('GET', CB, other)).callback_requests).toEqual([]);
    expect((await show(t, id)).status).toBe('queued');
  });

  it('settings: the four lifecycle settings, defaults, ranges (422 out of range), over REST and GraphQL', async () => {
    const t = await tenant(0);
    expect((await ok('GET', '/account/settings', t.admin)).settings).toEqual({
      omnichannel_routing: false, callback_offer_timeout: 30, callback_retry_delay: 120, callback_max_attempts: 3, wrap_up_time: 0, api_token_access: true,
    });
    for (const [key, bad] of [['callback_offer_timeout', 0], ['callback_offer_timeout', 601], ['callback_retry_delay', 86_401], ['callback_max_attempts', 11], ['wrap_up_time', -1], ['wrap_up_time', 1.5]] as const) {
      const res = await rest('PUT', '/account/settings', t.admin, { settings: { [key]: bad } });
      expect({ key, bad, status: res.statusCode, code: res.json().details?.[key]?.[0]?.error }).toEqual({ key, bad, status: 422, code: 'InvalidValue' });
    }
    const updated = await ok('PUT', '/account/settings', t.admin, { settings: { callback_offer_timeout: 600, wrap_up_time: 3600 } });
    expect(updated.settings).toMatchObject({ callback_offer_timeout: 600, callback_retry_delay: 120, wrap_up_time: 3600 });
    const gql = await ctx.graphql('mutation { updateAccountSettings(input: { callbackMaxAttempts: 10, callbackRetryDelay: 0 }) { callbackOfferTimeout callbackRetryDelay callbackMaxAttempts wrapUpTime } }', {}, { authorization: t.admin.basic });
    expect(gql.json().data.updateAccountSettings).toEqual({ callbackOfferTimeout: 600, callbackRetryDelay: 0, callbackMaxAttempts: 10, wrapUpTime: 3600 });
  });

  it('GraphQL: the same operations, with history and estimated wait', async () => {
    const t = await tenant(1);
    const [a] = t.agents;
    const gql = async (query: string, variables: Record<string, unknown>, who: TestUser) => {
      const res = await ctx.graphql(query, variables, { authorization: who.basic });
      const body = res.json();
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    const first = await create(t, t.admin, '+12518717097');
    await gql('mutation($id: ID!) { setAgentAvailability(agentId: $id, input: { agentState: ONLINE }) { agentState callStatus via } }', { id: String(a.id) }, a);
    await gql('mutation($id: ID!) { acceptCallbackRequest(id: $id) { status } }', { id: String(first) }, a);
    const done = await gql('mutation($id: ID!) { reportCallbackOutcome(id: $id, outcome: ANSWERED) { status history { status agentId reason } } }', { id: String(first) }, a);
    expect(done.reportCallbackOutcome.status).toBe('COMPLETED');
    expect(done.reportCallbackOutcome.history.at(-1)).toEqual({ status: 'COMPLETED', agentId: String(a.id), reason: 'answered' });
    // with a completed callback behind it, a queued one has an estimate
    await gql('mutation($id: ID!) { setAgentAvailability(agentId: $id, input: { agentState: AWAY }) { agentState } }', { id: String(a.id) }, a);
    const second = await create(t, t.admin, '+12518717098');
    const read = await gql('query($id: ID!) { callbackRequest(id: $id) { status queuePosition estimatedWaitTime } currentQueueActivity { callbacksWaiting agentsOnline } }', { id: String(second) }, a);
    expect(read.callbackRequest).toEqual({ status: 'QUEUED', queuePosition: 1, estimatedWaitTime: expect.any(Number) });
    expect(read.currentQueueActivity).toEqual({ callbacksWaiting: 1, agentsOnline: 0 });
    const cancelled = await gql('mutation($id: ID!) { cancelCallbackRequest(id: $id) { status } }', { id: String(second) }, t.admin);
    expect(cancelled.cancelCallbackRequest.status).toBe('CANCELLED');

    // the routing right after a creation may offer an older request instead: the result says what became of this one
    const third = await create(t, t.admin, '+12518717099'); // queued: A is away
    await ctx.db.prisma.agentAvailability.update({
      where: { accountId_userId: { accountId: t.accountId, userId: a.id } }, data: { agentState: 'online', idleSince: new Date(), onlineSince: new Date() },
    }); // online without routing, so that the older request still waits when the next one comes
    const made = await gql(
      'mutation($i: CallbackRequestInput!) { createCallbackRequest(input: $i) { id status agentId queuePosition } }',
      { i: { phoneNumberId: String(t.phoneId), requesterPhoneNumber: '+12518717100', groupIds: [String(t.groupId)] } }, t.admin,
    );
    expect((await show(t, third)).status).toBe('offered');
    expect(made.createCallbackRequest).toEqual({ id: expect.any(String), status: 'QUEUED', agentId: null, queuePosition: 1 });
  });
});
