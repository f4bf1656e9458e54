import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// The dashboards' typed live feeds (docs/api.md, "Live events", "The callback lifecycle"):
// callbackRequestUpdated, queueActivityUpdated and agentAvailabilityChanged over graphql-ws,
// for agents and admins of the account only, each change once, as it commits.

const CALLBACKS = 'subscription { callbackRequestUpdated { id status agentId queuePosition history { status } } }';
const QUEUE = 'subscription { queueActivityUpdated { agentsOnline callbacksWaiting } }';
const AGENTS = 'subscription { agentAvailabilityChanged { agentId agentState callStatus via } }';

type Result = { data?: Record<string, any> | null; errors?: { message: string; extensions?: { code?: string } }[] };

let ctx: TestContext;
let url: string;
let admin: TestUser;
let agent: TestUser;
let endUser: TestUser;
let otherAdmin: TestUser;
let phoneId: bigint;
const clients: Client[] = [];

beforeAll(async () => {
  ctx = await createTestApp();
  const address = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
  url = `${address.replace(/^http/, 'ws')}/graphql`;
  const a = await ctx.createAccount();
  admin = await ctx.createUser(a, 'admin');
  agent = await ctx.createUser(a, 'agent');
  endUser = await ctx.createUser(a, 'end_user');
  otherAdmin = await ctx.createUser(await ctx.createAccount(), 'admin');
  phoneId = (await ctx.db.prisma.voicePhoneNumber.create({ data: { accountId: a, number: '+14155553001' } })).id;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
  await waitFor(() => ctx.app.eventFeed.sessionCount === 0);
});
afterAll(() => ctx.close());

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function subscriber(user: TestUser, query: string) {
  const { token } = await insertToken(ctx, user, { scopes: ['read', 'write'] });
  const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: false, onNonLazyError: () => {} });
  clients.push(client);
  const results: Result[] = [];
  client.subscribe({ query }, { next: (r) => results.push(r as Result), error: (e) => results.push({ errors: Array.isArray(e) ? e : [{ message: String(e) }] }), complete: () => {} });
  return results;
}

const rest = (method: 'POST' | 'PUT', path: string, who: TestUser, payload: object) =>
  ctx.inject({ method, url: `/api/v2${path}`, headers: { authorization: who.basic, 'content-type': 'application/json' }, payload });

it('an agent sees each change of a callback request and of availability as it commits; the queue activity follows', async () => {
  const callbacks = await subscriber(agent, CALLBACKS);
  const queue = await subscriber(admin, QUEUE);
  const agents = await subscriber(admin, AGENTS);
  const outsider = await subscriber(otherAdmin, CALLBACKS);
  await waitFor(() => ctx.app.eventFeed.subscriptionCount >= 4);

  const created = await rest('POST', '/channels/voice/callback_requests', admin, { callback_request: { phone_number_id: Number(phoneId), requester_phone_number: '+14155553002' } });
  expect(created.statusCode).toBe(201);
  await waitFor(() => callbacks.length >= 1 && queue.length >= 1);
  expect(callbacks[0].data!.callbackRequestUpdated).toMatchObject({ status: 'QUEUED', agentId: null, queuePosition: 1 });
  expect(queue[0].data!.queueActivityUpdated).toEqual({ agentsOnline: 0, callbacksWaiting: 1 });

  // the agent comes online: the availability change and the offer, in the order they committed
  expect((await rest('PUT', `/channels/voice/availabilities/${agent.id}`, agent, { availability: { agent_state: 'online' } })).statusCode).toBe(200);
  await waitFor(() => callbacks.length >= 2 && agents.length >= 1 && queue.length >= 3);
  expect(agents[0].data!.agentAvailabilityChanged).toEqual({ agentId: String(agent.id), agentState: 'ONLINE', callStatus: null, via: 'CLIENT' });
  expect(callbacks[1].data!.callbackRequestUpdated).toMatchObject({ status: 'OFFERED', agentId: String(agent.id), queuePosition: null });
  expect(queue.at(-1)!.data!.queueActivityUpdated).toEqual({ agentsOnline: 1, callbacksWaiting: 1 });

  // accepting shows the agent on a call (the request has moved on to dialing by the time it is read)
  const id = callbacks[1].data!.callbackRequestUpdated.id;
  expect((await rest('POST', `/channels/voice/callback_requests/${id}/accept`, agent, {})).statusCode).toBe(200);
  await waitFor(() => agents.length >= 2 && callbacks.length >= 4);
  expect(agents[1].data!.agentAvailabilityChanged).toMatchObject({ agentId: String(agent.id), callStatus: 'ON_CALL' });
  expect(callbacks.slice(2).map((r) => r.data!.callbackRequestUpdated.status)).toEqual(['DIALING', 'DIALING']);
  expect(callbacks.at(-1)!.data!.callbackRequestUpdated.history.map((h: { status: string }) => h.status)).toEqual(['OFFERED', 'ACCEPTED', 'DIALING']);

  // nothing of this account reached another account's admin; no errors anywhere
  await new Promise((r) => setTimeout(r, 200));
  expect(outsider).toEqual([]);
  for (const r of [...callbacks, ...queue, ...agents]) expect(r.errors).toBeUndefined();
});

it('refuses end users: the subscription ends with FORBIDDEN', async () => {
  const results = await subscriber(endUser, CALLBACKS);
  await waitFor(() => results.length >= 1);
  expect(results[0].errors?.[0]?.extensions?.code ?? results[0].errors?.[0]?.message).toMatch(/FORBIDDEN|access/i);
});
