import { buildGraphQLSchema } from '../src/graphql/schema';
import { restRoutes } from '../src/rest/routes';
import { basicClientAuth, REDIRECT, RFC7636, startOAuthStack, type OAuthStack, type RegisteredClient } from './helpers/oauth-server';
import { insertToken, type TestUser } from './helpers/test-app';

// The audit log records every administrative change (docs/api.md, "Audit log"), in the
// change's own transaction. Tables below, keyed by GraphQL Mutation field and by
// REST route, say what each change must write; the first tests fail when the
// schema or the routes grow a change that no row (and no exemption) covers.
//
// Adding a row: a key (the Mutation field), an optional `setup` (whatever it
// writes is not the row's), and `run`, which makes the change once and returns
// the response and the records expected, e.g.
//
//   createGroup: {
//     run: async (k) => {
//       const { res, data } = await k.gql(k.admin, 'mutation { createGroup(input: { name: "Tier 2" }) { id } }');
//       return { res, records: [{ action: 'create', source_type: 'group', source_id: data.createGroup.id, changed_fields: [] }] };
//     },
//   },
//
// Each record is compared on action, source_type, source_id, changed_fields,
// actor_id (default: k.admin), via (graphql / api / oauth by table), request_id
// (the response's x-request-id) and ip_address (127.0.0.1), and on source_label
// and change_description when the row gives them.

jest.setTimeout(120_000);

type Headers = Record<string, string>;
/** A response of inject (headers as an object) or of fetch (a Headers instance). */
type AnyResponse = { headers: Record<string, unknown> | { get(name: string): string | null } };

interface ExpectedRecord {
  action: 'create' | 'update' | 'destroy';
  source_type: 'account' | 'user' | 'group' | 'group_membership' | 'voice_phone_number' | 'oauth_client' | 'oauth_token' | 'webhook' | 'callback_request' | 'api_token';
  source_id: string | number | bigint;
  /** default [] */
  changed_fields?: string[];
  /** the user who made the change (default: k.admin); null for the system */
  actor?: TestUser | null;
  /** default: the table's (graphql, api, oauth) */
  via?: string;
  source_label?: string;
  /** part of change_description */
  says?: string;
}

interface Outcome {
  /** the response of the request that made the change: its x-request-id is the records' request_id */
  res: AnyResponse;
  records: ExpectedRecord[];
}

interface Row<S = any> {
  setup?: (k: Kit) => Promise<S>;
  run: (k: Kit, prepared: S) => Promise<Outcome>;
}

interface Kit {
  s: OAuthStack;
  admin: TestUser;
  agent: TestUser;
  endUser: TestUser;
  /** a GraphQL request as `who` (a user: Basic; or headers), failing the test on any error */
  gql(who: TestUser | Headers, query: string, variables?: Record<string, unknown>): Promise<{ res: AnyResponse; data: Record<string, any> }>;
  /** a REST request as `who`, failing the test on anything but 2xx */
  rest(who: TestUser | Headers, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object): Promise<{ res: AnyResponse; body: any }>;
  /** a client made by the admin over GraphQL */
  client(input?: Record<string, unknown>): Promise<{ id: string; name: string; secret: string }>;
  /** a token of the admin for `clientId`, over GraphQL */
  token(clientId: string): Promise<{ id: string; token: string }>;
  /** a grant-endpoint request with the client's Basic credentials */
  grant(client: RegisteredClient, params: Record<string, string>): Promise<{ status: number; headers: globalThis.Headers; body: any }>;
  /** the id of a live access token (GET /api/v2/oauth/tokens/current) */
  idOf(accessToken: string): Promise<string>;
  /** every full secret and token handed out, for the leak check at the end */
  issued: string[];
}

const CREATE_CLIENT = 'mutation($input: OAuthClientInput!) { createOAuthClient(input: $input) { id name clientSecret } }';
const UPDATE_CLIENT = 'mutation($id: ID!, $input: OAuthClientInput!) { updateOAuthClient(id: $id, input: $input) { id } }';
const DELETE_CLIENT = 'mutation($id: ID!) { deleteOAuthClient(id: $id) }';
const GENERATE_SECRET = 'mutation($id: ID!, $grace: Int) { generateOAuthClientSecret(id: $id, gracePeriod: $grace) { clientSecret } }';
const END_GRACE = 'mutation($id: ID!) { endOAuthClientSecretGracePeriod(id: $id) { id } }';
const CREATE_TOKEN = 'mutation($input: CreateOAuthTokenInput!) { createOAuthToken(input: $input) { id token } }';
const REVOKE_TOKEN = 'mutation($id: ID!) { revokeOAuthToken(id: $id) }';
const REVOKE_CURRENT = 'mutation { revokeCurrentOAuthToken }';

const label = (token: string) => `${token.slice(0, 10)}...`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** GraphQL mutations that are not administration: they write no audit record. */
const EXEMPT_MUTATIONS: Record<string, string> = {
  // callback requests are customer traffic, like Zendesk tickets, not administration
  createCallbackRequest: 'customer traffic',
  // sends a test request to the webhook and stores nothing (docs/api.md, "Webhook deliveries")
  testWebhook: 'changes nothing',
};
/** REST routes of those mutations */
const EXEMPT_ROUTES: Record<string, string> = {
  'POST /api/v2/channels/voice/callback_requests': 'customer traffic (createCallbackRequest)',
  'POST /api/v2/webhooks/:id/test': 'changes nothing (testWebhook)',
};

/**
 * A callback request of the kit's account in `status`, offered to or dialing for `agent`
 * (who is offline, so that no routing decision adds records of its own), straight in the database.
 */
async function callbackIn(k: Kit, status: 'queued' | 'offered' | 'dialing', agent: TestUser | null = k.agent): Promise<string> {
  const prisma = k.s.ctx.db.prisma;
  const accountId = k.admin.accountId;
  const phone = await prisma.voicePhoneNumber.create({ data: { accountId, number: `+1415556${String(nextCallback++).padStart(4, '0')}` } });
  const request = await prisma.callbackRequest.create({
    data: {
      accountId, phoneNumberId: phone.id, requesterPhoneNumber: '+14155550123', requestedGroupIds: [], routedGroupIds: [], status, createdById: k.admin.id,
      agentId: status === 'queued' ? null : agent!.id, attempts: status === 'dialing' ? 1 : 0, dialingAt: status === 'dialing' ? new Date() : null,
    },
  });
  if (agent) {
    const availability = { agentState: 'offline' as const, callStatus: status === 'dialing' ? ('on_call' as const) : null, offeredRequestId: status === 'offered' ? request.id : null };
    await prisma.agentAvailability.upsert({ where: { accountId_userId: { accountId, userId: agent.id } }, create: { accountId, userId: agent.id, ...availability }, update: availability });
  }
  return String(request.id);
}
let nextCallback = 1;
const LIFECYCLE_RECORD = (id: string, actor: TestUser, says: string): ExpectedRecord => ({ action: 'update', source_type: 'callback_request', source_id: id, changed_fields: ['status'], actor, says });
const CALL_STATUS_RECORD = (agent: TestUser, actor: TestUser = agent): ExpectedRecord => ({ action: 'update', source_type: 'user', source_id: agent.id, changed_fields: ['call_status'], actor });

/** The callback lifecycle's mutations (docs/api.md, "The callback lifecycle"): each transition writes its record. */
const LIFECYCLE_MUTATIONS: Record<string, Row> = {
  acceptCallbackRequest: {
    setup: (k) => callbackIn(k, 'offered'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.agent, 'mutation($id: ID!) { acceptCallbackRequest(id: $id) { status } }', { id });
      return { res, records: [LIFECYCLE_RECORD(id, k.agent, 'Accepted'), LIFECYCLE_RECORD(id, k.agent, 'Dialing'), CALL_STATUS_RECORD(k.agent)] };
    },
  },
  declineCallbackRequest: {
    setup: (k) => callbackIn(k, 'offered'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.agent, 'mutation($id: ID!) { declineCallbackRequest(id: $id) { status } }', { id });
      return { res, records: [LIFECYCLE_RECORD(id, k.agent, 'Declined')] };
    },
  },
  reportCallbackOutcome: {
    setup: (k) => callbackIn(k, 'dialing'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.agent, 'mutation($id: ID!) { reportCallbackOutcome(id: $id, outcome: ANSWERED) { status } }', { id });
      return { res, records: [LIFECYCLE_RECORD(id, k.agent, 'Completed'), CALL_STATUS_RECORD(k.agent)] };
    },
  },
  cancelCallbackRequest: {
    setup: (k) => callbackIn(k, 'queued', null),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { cancelCallbackRequest(id: $id) { status } }', { id });
      return { res, records: [LIFECYCLE_RECORD(id, k.admin, 'Cancelled')] };
    },
  },
  setAgentAvailability: {
    run: async (k) => {
      // an admin sets the agent's state: the record is the admin's, on the agent
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { setAgentAvailability(agentId: $id, input: { agentState: AWAY, via: PHONE }) { agentState } }', { id: String(k.agent.id) });
      return { res, records: [{ action: 'update', source_type: 'user', source_id: k.agent.id, changed_fields: ['agent_state', 'via'], says: 'Agent state: away' }] };
    },
  },
};

const LIFECYCLE_ROUTES: Record<string, Row> = {
  'POST /api/v2/channels/voice/callback_requests/:id/accept': {
    setup: (k) => callbackIn(k, 'offered'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.agent, 'POST', `/api/v2/channels/voice/callback_requests/${id}/accept`);
      return { res, records: [LIFECYCLE_RECORD(id, k.agent, 'Accepted'), LIFECYCLE_RECORD(id, k.agent, 'Dialing'), CALL_STATUS_RECORD(k.agent)] };
    },
  },
  'POST /api/v2/channels/voice/callback_requests/:id/decline': {
    setup: (k) => callbackIn(k, 'offered'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.agent, 'POST', `/api/v2/channels/voice/callback_requests/${id}/decline.json`);
      return { res, records: [LIFECYCLE_RECORD(id, k.agent, 'Declined')] };
    },
  },
  'POST /api/v2/channels/voice/callback_requests/:id/outcome': {
    setup: (k) => callbackIn(k, 'dialing'),
    run: async (k, id: string) => {
      // an admin reports it for the agent (an integration does the same with a write token)
      const { res } = await k.rest(k.admin, 'POST', `/api/v2/channels/voice/callback_requests/${id}/outcome`, { outcome: 'failed' });
      return { res, records: [LIFECYCLE_RECORD(id, k.admin, 'Failed'), CALL_STATUS_RECORD(k.agent, k.admin)] };
    },
  },
  'DELETE /api/v2/channels/voice/callback_requests/:id': {
    setup: (k) => callbackIn(k, 'offered'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/channels/voice/callback_requests/${id}`);
      return { res, records: [LIFECYCLE_RECORD(id, k.admin, 'Cancelled')] };
    },
  },
  'PUT /api/v2/channels/voice/availabilities/:id': {
    run: async (k) => {
      const { res } = await k.rest(k.agent, 'PUT', `/api/v2/channels/voice/availabilities/${k.agent.id}.json`, { availability: { agent_state: 'transfers_only', via: 'client' } });
      return { res, records: [{ action: 'update', source_type: 'user', source_id: k.agent.id, changed_fields: ['agent_state', 'via'], actor: k.agent, says: 'Agent state: transfers_only' }] };
    },
  },
};

/** Every GraphQL mutation, by its field name. */
const MUTATIONS: Record<string, Row> = {
  ...LIFECYCLE_MUTATIONS,
  createOAuthClient: {
    run: async (k) => {
      const input = { name: 'Created app', scopes: 'read write', redirectUris: ['https://app.example.com/cb'], clientType: 'CONFIDENTIAL' };
      const { res, data } = await k.gql(k.admin, CREATE_CLIENT, { input });
      k.issued.push(data.createOAuthClient.clientSecret);
      return { res, records: [{ action: 'create', source_type: 'oauth_client', source_id: data.createOAuthClient.id, source_label: 'Created app', changed_fields: ['name', 'client_type', 'scopes', 'redirect_uris', 'client_secret'] }] };
    },
  },
  updateOAuthClient: {
    setup: (k) => k.client({ name: 'Before', company: 'Acme' }),
    run: async (k, c) => {
      // company is given with its current value: not a change
      const { res } = await k.gql(k.admin, UPDATE_CLIENT, { id: c.id, input: { name: 'After', company: 'Acme', scopes: 'read' } });
      return {
        res,
        records: [{ action: 'update', source_type: 'oauth_client', source_id: c.id, changed_fields: ['name', 'scopes'], source_label: 'After', says: 'Changed name, scopes' }],
      };
    },
  },
  deleteOAuthClient: {
    setup: async (k) => {
      const c = await k.client({ name: 'Doomed' });
      await k.token(c.id);
      await k.token(c.id);
      await k.gql(k.admin, REVOKE_TOKEN, { id: (await k.token(c.id)).id });
      return c;
    },
    run: async (k, c) => {
      const { res } = await k.gql(k.admin, DELETE_CLIENT, { id: c.id });
      // one record for the client, none per token
      return { res, records: [{ action: 'destroy', source_type: 'oauth_client', source_id: c.id, source_label: 'Doomed', says: 'Deleted; 2 tokens revoked with it' }] };
    },
  },
  generateOAuthClientSecret: {
    setup: (k) => k.client(),
    run: async (k, c) => {
      const { res, data } = await k.gql(k.admin, GENERATE_SECRET, { id: c.id, grace: 3600 });
      k.issued.push(data.generateOAuthClientSecret.clientSecret);
      return {
        res,
        records: [{ action: 'update', source_type: 'oauth_client', source_id: c.id, changed_fields: ['client_secret'], says: 'stays valid for 3600 seconds' }],
      };
    },
  },
  endOAuthClientSecretGracePeriod: {
    setup: async (k) => {
      const c = await k.client();
      k.issued.push((await k.gql(k.admin, GENERATE_SECRET, { id: c.id, grace: 3600 })).data.generateOAuthClientSecret.clientSecret);
      return c;
    },
    run: async (k, c) => {
      const { res } = await k.gql(k.admin, END_GRACE, { id: c.id });
      return { res, records: [{ action: 'update', source_type: 'oauth_client', source_id: c.id, changed_fields: ['client_secret'], says: 'grace period' }] };
    },
  },
  createOAuthToken: {
    setup: (k) => k.client(),
    run: async (k, c) => {
      const { res, data } = await k.gql(k.admin, CREATE_TOKEN, { input: { clientId: c.id, scopes: ['read'] } });
      const t = data.createOAuthToken;
      k.issued.push(t.token);
      return { res, records: [{ action: 'create', source_type: 'oauth_token', source_id: t.id, source_label: label(t.token), says: `client ${c.id}` }] };
    },
  },
  revokeOAuthToken: {
    // an admin revoking an agent's token is the actor
    setup: (k) => insertToken(k.s.ctx, k.agent),
    run: async (k, t) => {
      const { res } = await k.gql(k.admin, REVOKE_TOKEN, { id: String(t.id) });
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: t.id, actor: k.admin, source_label: label(t.token), says: 'Revoked' }] };
    },
  },
  revokeCurrentOAuthToken: {
    setup: (k) => insertToken(k.s.ctx, k.agent, { scopes: ['read'] }),
    run: async (k, t) => {
      const { res } = await k.gql(bearer(t.token), REVOKE_CURRENT);
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: t.id, actor: k.agent, source_label: label(t.token) }] };
    },
  },
  revokeAuthorizedApp: {
    // an end user revoking the app they allowed: the grant's token is revoked, the end user the actor
    setup: async (k) => {
      const c = await k.s.register({ type: 'confidential' });
      const code = (await k.s.authorize(c, { verifier: RFC7636.verifier, user: k.endUser })).get('code')!;
      const issued = await k.grant(c, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier });
      k.issued.push(issued.body.access_token, issued.body.refresh_token);
      const { data } = await k.gql(k.endUser, '{ me { authorizedApps { id } } }');
      return { app: data.me.authorizedApps[0].id as string, token: issued.body.access_token as string, tokenId: await k.idOf(issued.body.access_token) };
    },
    run: async (k, t) => {
      const { res } = await k.gql(k.endUser, 'mutation($id: ID!) { revokeAuthorizedApp(id: $id) }', { id: t.app });
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: t.tokenId, actor: k.endUser, source_label: label(t.token), says: 'by its user (authorized apps)' }] };
    },
  },
};

/** The directory's mutations (users, groups, voice phone numbers, account settings). */
const CREATE_USER = 'mutation($input: CreateUserInput!) { createUser(input: $input) { id } }';
const newUser = async (k: Kit, name = 'Audited user') => {
  const email = `audited-${Math.random().toString(36).slice(2)}@example.com`;
  return (await k.gql(k.admin, CREATE_USER, { input: { name, email, role: 'AGENT', password: 'long enough password' } })).data.createUser.id as string;
};
const newGroup = async (k: Kit, name = 'Audited group') =>
  (await k.gql(k.admin, 'mutation($input: GroupInput!) { createGroup(input: $input) { id } }', { input: { name } })).data.createGroup.id as string;
/** A group with a new agent in it: the membership's id, and the agent's and group's. */
const newMembership = async (k: Kit) => {
  const [userId, groupId] = [await newUser(k, 'Member'), await newGroup(k, 'Members')];
  const { data } = await k.gql(k.admin, 'mutation($input: GroupMembershipInput!) { createGroupMembership(input: $input) { id } }', { input: { userId, groupId } });
  return { id: data.createGroupMembership.id as string, userId, groupId };
};
let nextNumber = 2670;
const newPhoneNumber = async (k: Kit) =>
  (await k.gql(k.admin, 'mutation($input: PhoneNumberInput!) { createPhoneNumber(input: $input) { id } }', { input: { number: `+1415555${nextNumber++}` } })).data.createPhoneNumber.id as string;

Object.assign(MUTATIONS, {
  createUser: {
    run: async (k) => {
      const { res, data } = await k.gql(k.admin, CREATE_USER, { input: { name: 'Gina', email: 'gina@example.com', role: 'AGENT', password: 'long enough password' } });
      return { res, records: [{ action: 'create', source_type: 'user', source_id: data.createUser.id, source_label: 'Gina', changed_fields: ['name', 'email', 'role', 'password'] }] };
    },
  },
  updateUser: {
    setup: (k) => newUser(k, 'Hal'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id } }', { id, input: { name: 'Hal 2', role: 'END_USER' } });
      return { res, records: [{ action: 'update', source_type: 'user', source_id: id, changed_fields: ['name', 'role'], source_label: 'Hal 2' }] };
    },
  },
  deleteUser: {
    setup: (k) => newUser(k, 'Ivy'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { deleteUser(id: $id) { active } }', { id });
      return { res, records: [{ action: 'destroy', source_type: 'user', source_id: id, changed_fields: ['active'], source_label: 'Ivy' }] };
    },
  },
  setUserPassword: {
    setup: (k) => newUser(k, 'Jo'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { setUserPassword(id: $id, password: "another long password") }', { id });
      return { res, records: [{ action: 'update', source_type: 'user', source_id: id, changed_fields: ['password'] }] };
    },
  },
  createGroup: {
    run: async (k) => {
      const { res, data } = await k.gql(k.admin, 'mutation { createGroup(input: { name: "Tier 2" }) { id } }');
      return { res, records: [{ action: 'create', source_type: 'group', source_id: data.createGroup.id, source_label: 'Tier 2', changed_fields: ['name'] }] };
    },
  },
  updateGroup: {
    setup: (k) => newGroup(k, 'Tier 3'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { updateGroup(id: $id, input: { description: "Escalations" }) { id } }', { id });
      return { res, records: [{ action: 'update', source_type: 'group', source_id: id, changed_fields: ['description'], source_label: 'Tier 3' }] };
    },
  },
  deleteGroup: {
    setup: (k) => newGroup(k, 'Tier 4'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { deleteGroup(id: $id) }', { id });
      return { res, records: [{ action: 'destroy', source_type: 'group', source_id: id, source_label: 'Tier 4' }] };
    },
  },
  createGroupMembership: {
    setup: async (k) => ({ userId: await newUser(k, 'Ola'), groupId: await newGroup(k, 'Tier 5') }),
    run: async (k, { userId, groupId }: { userId: string; groupId: string }) => {
      const { res, data } = await k.gql(k.admin, 'mutation($input: GroupMembershipInput!) { createGroupMembership(input: $input) { id } }', { input: { userId, groupId } });
      return {
        res,
        records: [{ action: 'create', source_type: 'group_membership', source_id: data.createGroupMembership.id, source_label: 'Ola in Tier 5', changed_fields: ['user_id', 'group_id'] }],
      };
    },
  },
  deleteGroupMembership: {
    setup: (k) => newMembership(k),
    run: async (k, m: { id: string; userId: string; groupId: string }) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { deleteGroupMembership(id: $id) }', { id: m.id });
      return { res, records: [{ action: 'destroy', source_type: 'group_membership', source_id: m.id, source_label: 'Member in Members', says: `user ${m.userId} from group ${m.groupId}` }] };
    },
  },
  createPhoneNumber: {
    run: async (k) => {
      const { res, data } = await k.gql(k.admin, 'mutation { createPhoneNumber(input: { number: "+14155550199", callbackEnabled: true }) { id } }');
      return { res, records: [{ action: 'create', source_type: 'voice_phone_number', source_id: data.createPhoneNumber.id, source_label: '+14155550199', changed_fields: ['number', 'callback_enabled', 'capabilities.voice', 'capabilities.sms', 'capabilities.mms'] }] };
    },
  },
  updatePhoneNumber: {
    setup: (k) => newPhoneNumber(k),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { updatePhoneNumber(id: $id, input: { nickname: "Night line", capabilities: { sms: true } }) { id } }', { id });
      return { res, records: [{ action: 'update', source_type: 'voice_phone_number', source_id: id, changed_fields: ['nickname', 'capabilities.sms'] }] };
    },
  },
  deletePhoneNumber: {
    setup: (k) => newPhoneNumber(k),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { deletePhoneNumber(id: $id) }', { id });
      return { res, records: [{ action: 'destroy', source_type: 'voice_phone_number', source_id: id }] };
    },
  },
  updateAccountSettings: {
    run: async (k) => {
      const { res } = await k.gql(k.admin, 'mutation { updateAccountSettings(input: { omnichannelRouting: true }) { omnichannelRouting } }');
      return { res, records: [{ action: 'update', source_type: 'account', source_id: k.admin.accountId, changed_fields: ['omnichannel_routing'] }] };
    },
  },
} satisfies Record<string, Row>);

/** Every REST route that changes something, by method and path (each path of a route). */
const ROUTES: Record<string, Row> = {
  ...LIFECYCLE_ROUTES,
  'POST /api/v2/oauth/clients': {
    run: async (k) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/oauth/clients', { name: 'REST app', scopes: 'read', redirect_uris: 'https://rest.example.com/cb' });
      k.issued.push(body.client_secret);
      return { res, records: [{ action: 'create', source_type: 'oauth_client', source_id: body.id, source_label: 'REST app', changed_fields: ['name', 'client_type', 'scopes', 'redirect_uris', 'client_secret'] }] };
    },
  },
  'PUT /api/v2/oauth/clients/:id': {
    setup: (k) => k.client(),
    run: async (k, c) => {
      const { res } = await k.rest(k.admin, 'PUT', `/api/v2/oauth/clients/${c.id}.json`, { client: { redirect_uris: ['https://new.example.com/cb'], client_type: 'confidential' } });
      return { res, records: [{ action: 'update', source_type: 'oauth_client', source_id: c.id, changed_fields: ['client_type', 'redirect_uris'] }] };
    },
  },
  'DELETE /api/v2/oauth/clients/:id': {
    setup: async (k) => {
      const c = await k.client();
      await k.token(c.id);
      return c;
    },
    run: async (k, c) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/oauth/clients/${c.id}`);
      return { res, records: [{ action: 'destroy', source_type: 'oauth_client', source_id: c.id, says: '1 token revoked with it' }] };
    },
  },
  'POST /api/v2/oauth/clients/:id': {
    setup: (k) => k.client(),
    run: async (k, c) => {
      const { res, body } = await k.rest(k.admin, 'POST', `/api/v2/oauth/clients/${c.id}.json`);
      k.issued.push(body.client_secret);
      return { res, records: [{ action: 'update', source_type: 'oauth_client', source_id: c.id, changed_fields: ['client_secret'], says: 'stopped working' }] };
    },
  },
  'POST /api/v2/oauth/clients/:id/client_secret': {
    setup: (k) => k.client(),
    run: async (k, c) => {
      const { res, body } = await k.rest(k.admin, 'POST', `/api/v2/oauth/clients/${c.id}/client_secret`, { grace_period: 60 });
      k.issued.push(body.client_secret);
      return { res, records: [{ action: 'update', source_type: 'oauth_client', source_id: c.id, changed_fields: ['client_secret'], says: '60 seconds' }] };
    },
  },
  'PUT /api/v2/oauth/clients/:id/generate_secret': {
    setup: (k) => k.client(),
    run: async (k, c) => {
      // Zendesk Support's form, as node-zendesk sends it: no body
      const { res, body } = await k.rest(k.admin, 'PUT', `/api/v2/oauth/clients/${c.id}/generate_secret.json`);
      k.issued.push(body.client_secret);
      return { res, records: [{ action: 'update', source_type: 'oauth_client', source_id: c.id, changed_fields: ['client_secret'], says: 'stopped working' }] };
    },
  },
  'POST /api/v2/oauth/tokens': {
    setup: (k) => k.client(),
    run: async (k, c) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/oauth/tokens', { token: { client_id: Number(c.id), scopes: ['read', 'write'] } });
      k.issued.push(body.token.token);
      return { res, records: [{ action: 'create', source_type: 'oauth_token', source_id: body.token.id, source_label: label(body.token.token), says: 'scopes read write' }] };
    },
  },
  'DELETE /api/v2/oauth/tokens/current': {
    setup: (k) => insertToken(k.s.ctx, k.endUser),
    run: async (k, t) => {
      const { res } = await k.rest(bearer(t.token), 'DELETE', '/api/v2/oauth/tokens/current.json');
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: t.id, actor: k.endUser }] };
    },
  },
  'DELETE /api/v2/oauth/tokens/:id': {
    // an agent revoking their own token
    setup: (k) => insertToken(k.s.ctx, k.agent),
    run: async (k, t) => {
      const { res } = await k.rest(k.agent, 'DELETE', `/api/v2/oauth/tokens/${t.id}`);
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: t.id, actor: k.agent, source_label: label(t.token) }] };
    },
  },
  'DELETE /api/v2/users/me/oauth/grants/:id': {
    // an agent revoking a token of theirs from their authorized apps
    setup: (k) => insertToken(k.s.ctx, k.agent),
    run: async (k, t) => {
      const { res } = await k.rest(k.agent, 'DELETE', `/api/v2/users/me/oauth/grants/token-${t.id}`);
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: t.id, actor: k.agent, source_label: label(t.token), says: 'authorized apps' }] };
    },
  },
};

Object.assign(ROUTES, {
  'POST /api/v2/users': {
    run: async (k) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/users.json', { user: { name: 'Kim', email: 'kim@example.com', role: 'end_user' } });
      return { res, records: [{ action: 'create', source_type: 'user', source_id: body.user.id, source_label: 'Kim', changed_fields: ['name', 'email', 'role'] }] };
    },
  },
  'PUT /api/v2/users/:id': {
    setup: (k) => newUser(k, 'Lee'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'PUT', `/api/v2/users/${id}`, { user: { active: false } });
      return { res, records: [{ action: 'update', source_type: 'user', source_id: id, changed_fields: ['active'] }] };
    },
  },
  'DELETE /api/v2/users/:id': {
    setup: (k) => newUser(k, 'Max'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/users/${id}.json`);
      return { res, records: [{ action: 'destroy', source_type: 'user', source_id: id, changed_fields: ['active'] }] };
    },
  },
  'PUT /api/v2/users/:id/password': {
    // the user changes their own password, with the previous one
    run: async (k) => {
      const { res } = await k.rest(k.endUser, 'PUT', `/api/v2/users/${k.endUser.id}/password`, { password: 'a brand new password', previous_password: k.endUser.password });
      return { res, records: [{ action: 'update', source_type: 'user', source_id: k.endUser.id, changed_fields: ['password'], actor: k.endUser }] };
    },
  },
  'POST /api/v2/users/:id/password': {
    setup: (k) => newUser(k, 'Ned'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'POST', `/api/v2/users/${id}/password`, { password: 'set by the admin' });
      return { res, records: [{ action: 'update', source_type: 'user', source_id: id, changed_fields: ['password'] }] };
    },
  },
  'POST /api/v2/groups': {
    run: async (k) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/groups', { group: { name: 'Billing', description: 'Invoices' } });
      return { res, records: [{ action: 'create', source_type: 'group', source_id: body.group.id, source_label: 'Billing', changed_fields: ['name', 'description'] }] };
    },
  },
  'PUT /api/v2/groups/:id': {
    setup: (k) => newGroup(k, 'Sales'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'PUT', `/api/v2/groups/${id}.json`, { group: { name: 'Sales EMEA' } });
      return { res, records: [{ action: 'update', source_type: 'group', source_id: id, changed_fields: ['name'], source_label: 'Sales EMEA' }] };
    },
  },
  'DELETE /api/v2/groups/:id': {
    setup: (k) => newGroup(k, 'Old'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/groups/${id}`);
      return { res, records: [{ action: 'destroy', source_type: 'group', source_id: id, source_label: 'Old' }] };
    },
  },
  'POST /api/v2/group_memberships': {
    setup: async (k) => ({ userId: await newUser(k, 'Pat'), groupId: await newGroup(k, 'Tier 6') }),
    run: async (k, { userId, groupId }: { userId: string; groupId: string }) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/group_memberships', { group_membership: { user_id: Number(userId), group_id: Number(groupId) } });
      return {
        res,
        records: [{ action: 'create', source_type: 'group_membership', source_id: body.group_membership.id, source_label: 'Pat in Tier 6', changed_fields: ['user_id', 'group_id'] }],
      };
    },
  },
  'DELETE /api/v2/group_memberships/:id': {
    setup: (k) => newMembership(k),
    run: async (k, m: { id: string }) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/group_memberships/${m.id}.json`);
      return { res, records: [{ action: 'destroy', source_type: 'group_membership', source_id: m.id, source_label: 'Member in Members' }] };
    },
  },
  'POST /api/v2/channels/voice/phone_numbers': {
    run: async (k) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/channels/voice/phone_numbers.json', { phone_number: { number: '+14155550198', callback_enabled: true } });
      return { res, records: [{ action: 'create', source_type: 'voice_phone_number', source_id: body.phone_number.id, source_label: '+14155550198', changed_fields: ['number', 'callback_enabled', 'capabilities.voice', 'capabilities.sms', 'capabilities.mms'] }] };
    },
  },
  'PUT /api/v2/channels/voice/phone_numbers/:id': {
    setup: (k) => newPhoneNumber(k),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'PUT', `/api/v2/channels/voice/phone_numbers/${id}`, { phone_number: { callback_enabled: true } });
      return { res, records: [{ action: 'update', source_type: 'voice_phone_number', source_id: id, changed_fields: ['callback_enabled'] }] };
    },
  },
  'DELETE /api/v2/channels/voice/phone_numbers/:id': {
    setup: (k) => newPhoneNumber(k),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/channels/voice/phone_numbers/${id}.json`);
      return { res, records: [{ action: 'destroy', source_type: 'voice_phone_number', source_id: id }] };
    },
  },
  'PUT /api/v2/account/settings': {
    // the GraphQL row turned it on: this turns it off again
    run: async (k) => {
      const { res } = await k.rest(k.admin, 'PUT', '/api/v2/account/settings.json', { settings: { omnichannel_routing: false } });
      return { res, records: [{ action: 'update', source_type: 'account', source_id: k.admin.accountId, changed_fields: ['omnichannel_routing'] }] };
    },
  },
} satisfies Record<string, Row>);

/** The OAuth endpoints: tokens they issue and revoke. The actor is the user the token acts as; a replay's is the system. */
const OAUTH: Record<string, Row> = {
  'authorization_code: the token, acting as the consenting user': {
    setup: (k) => k.s.register({ type: 'confidential' }),
    run: async (k, c: RegisteredClient) => {
      const code = (await k.s.authorize(c, { verifier: RFC7636.verifier, user: k.agent })).get('code')!;
      const res = await k.grant(c, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier });
      k.issued.push(res.body.access_token, res.body.refresh_token);
      const id = await k.idOf(res.body.access_token);
      return { res, records: [{ action: 'create', source_type: 'oauth_token', source_id: id, actor: k.agent, source_label: label(res.body.access_token), says: 'authorization_code grant' }] };
    },
  },
  'refresh_token: the new token, naming the token it rotated': {
    setup: async (k) => {
      const c = await k.s.register({ type: 'confidential' });
      return { c, first: await codeFlow(k, c) };
    },
    run: async (k, { c, first }) => {
      const res = await k.grant(c, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      k.issued.push(res.body.access_token, res.body.refresh_token);
      const id = await k.idOf(res.body.access_token);
      return { res, records: [{ action: 'create', source_type: 'oauth_token', source_id: id, actor: k.agent, says: `refresh_token grant for client ${c.id}; rotated token ${first.id}` }] };
    },
  },
  'client_credentials: the token, acting as the admin who created the client': {
    setup: (k) => k.s.register({ type: 'confidential' }),
    run: async (k, c: RegisteredClient) => {
      const res = await k.grant(c, { grant_type: 'client_credentials', scope: 'read' });
      k.issued.push(res.body.access_token);
      const id = await k.idOf(res.body.access_token);
      return { res, records: [{ action: 'create', source_type: 'oauth_token', source_id: id, actor: k.admin, says: 'client_credentials grant' }] };
    },
  },
  '/oauth/revoke of an access token': {
    setup: async (k) => {
      const c = await k.s.register({ type: 'confidential' });
      return { c, t: await codeFlow(k, c) };
    },
    run: async (k, { c, t }) => {
      const res = await k.s.post('/oauth/revoke', { token: t.access_token }, { authorization: basicClientAuth(c.identifier, c.secret) });
      expect(res.status).toBe(200);
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: t.id, actor: k.agent, says: '/oauth/revoke' }] };
    },
  },
  '/oauth/revoke of a refresh token: its family': {
    setup: async (k) => {
      const c = await k.s.register({ type: 'confidential' });
      const first = await codeFlow(k, c);
      const second = await k.grant(c, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      k.issued.push(second.body.access_token, second.body.refresh_token);
      return { c, live: { id: await k.idOf(second.body.access_token), refresh: second.body.refresh_token as string } };
    },
    run: async (k, { c, live }) => {
      const res = await k.s.post('/oauth/revoke', { token: live.refresh }, { authorization: basicClientAuth(c.identifier, c.secret) });
      expect(res.status).toBe(200);
      // the rotated first token was revoked already: only the live one is a change
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: live.id, actor: k.agent, says: 'Revoked with its grant at /oauth/revoke' }] };
    },
  },
  'a replayed authorization code: the system revokes what it issued': {
    setup: async (k) => {
      const c = await k.s.register({ type: 'confidential' });
      const code = (await k.s.authorize(c, { verifier: RFC7636.verifier, user: k.agent })).get('code')!;
      const first = await k.grant(c, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier });
      k.issued.push(first.body.access_token, first.body.refresh_token);
      return { c, code, id: await k.idOf(first.body.access_token) };
    },
    run: async (k, { c, code, id }) => {
      const res = await k.grant(c, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier });
      expect(res.body.error).toBe('invalid_grant');
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: id, actor: null, says: 'authorization code that issued it was presented again' }] };
    },
  },
  'a replayed refresh token: the system revokes its family': {
    setup: async (k) => {
      const c = await k.s.register({ type: 'confidential' });
      const first = await codeFlow(k, c);
      const second = await k.grant(c, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      k.issued.push(second.body.access_token, second.body.refresh_token);
      return { c, first, secondId: await k.idOf(second.body.access_token) };
    },
    run: async (k, { c, first, secondId }) => {
      const res = await k.grant(c, { grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect(res.body.error).toBe('invalid_grant');
      return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: secondId, actor: null, says: `refresh token of token ${first.id}` }] };
    },
  },
};

/** An authorization code flow for the agent: the access token's id and both texts. */
async function codeFlow(k: Kit, c: RegisteredClient): Promise<{ id: string; access_token: string; refresh_token: string }> {
  const code = (await k.s.authorize(c, { verifier: RFC7636.verifier, user: k.agent })).get('code')!;
  const res = await k.grant(c, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier });
  expect(res.status).toBe(200);
  k.issued.push(res.body.access_token, res.body.refresh_token);
  return { id: await k.idOf(res.body.access_token), access_token: res.body.access_token, refresh_token: res.body.refresh_token };
}

/** Webhooks: every change is audited by field names; a signing secret never reaches a record. */
const WEBHOOK = { name: 'Audited hook', endpoint: 'https://hooks.example.com/a', httpMethod: 'POST', requestFormat: 'JSON', status: 'ACTIVE' };
const WEBHOOK_FIELDS = ['name', 'endpoint', 'http_method', 'request_format', 'status', 'signing_secret'];
const newWebhook = async (k: Kit, name = 'Audited hook') =>
  (await k.gql(k.admin, 'mutation($input: WebhookInput!) { createWebhook(input: $input) { id } }', { input: { ...WEBHOOK, name } })).data.createWebhook.id as string;
const RESET_SECRET = 'mutation($id: ID!) { resetWebhookSigningSecret(id: $id) { secret } }';

Object.assign(MUTATIONS, {
  createWebhook: {
    run: async (k) => {
      const { res, data } = await k.gql(k.admin, 'mutation($input: WebhookInput!) { createWebhook(input: $input) { id } }', { input: WEBHOOK });
      return { res, records: [{ action: 'create', source_type: 'webhook', source_id: data.createWebhook.id, source_label: 'Audited hook', changed_fields: WEBHOOK_FIELDS }] };
    },
  },
  updateWebhook: {
    setup: (k) => newWebhook(k, 'Hook 2'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { updateWebhook(id: $id, input: { status: INACTIVE }) { id } }', { id });
      return { res, records: [{ action: 'update', source_type: 'webhook', source_id: id, changed_fields: ['status'], source_label: 'Hook 2' }] };
    },
  },
  deleteWebhook: {
    setup: (k) => newWebhook(k, 'Hook 3'),
    run: async (k, id: string) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { deleteWebhook(id: $id) }', { id });
      return { res, records: [{ action: 'destroy', source_type: 'webhook', source_id: id, source_label: 'Hook 3' }] };
    },
  },
  resetWebhookSigningSecret: {
    setup: (k) => newWebhook(k, 'Hook 4'),
    run: async (k, id: string) => {
      const { res, data } = await k.gql(k.admin, RESET_SECRET, { id });
      k.issued.push(data.resetWebhookSigningSecret.secret);
      return { res, records: [{ action: 'update', source_type: 'webhook', source_id: id, changed_fields: ['signing_secret'], source_label: 'Hook 4' }] };
    },
  },
} satisfies Record<string, Row>);

const REST_WEBHOOK = { name: 'REST hook', endpoint: 'https://hooks.example.com/r', http_method: 'POST', request_format: 'json', status: 'active' };
Object.assign(ROUTES, {
  'POST /api/v2/webhooks': {
    run: async (k) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/webhooks', { webhook: REST_WEBHOOK });
      return { res, records: [{ action: 'create', source_type: 'webhook', source_id: body.webhook.id, source_label: 'REST hook', changed_fields: WEBHOOK_FIELDS }] };
    },
  },
  'PUT /api/v2/webhooks/:id': {
    setup: (k) => newWebhook(k, 'Hook 5'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'PUT', `/api/v2/webhooks/${id}`, { webhook: { ...REST_WEBHOOK, name: 'Hook 5b' } });
      return { res, records: [{ action: 'update', source_type: 'webhook', source_id: id, changed_fields: ['name', 'endpoint'], source_label: 'Hook 5b' }] };
    },
  },
  'PATCH /api/v2/webhooks/:id': {
    setup: (k) => newWebhook(k, 'Hook 6'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'PATCH', `/api/v2/webhooks/${id}`, { webhook: { description: 'Audited' } });
      return { res, records: [{ action: 'update', source_type: 'webhook', source_id: id, changed_fields: ['description'], source_label: 'Hook 6' }] };
    },
  },
  'DELETE /api/v2/webhooks/:id': {
    setup: (k) => newWebhook(k, 'Hook 7'),
    run: async (k, id: string) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/webhooks/${id}`);
      return { res, records: [{ action: 'destroy', source_type: 'webhook', source_id: id, source_label: 'Hook 7' }] };
    },
  },
  'POST /api/v2/webhooks/:id/signing_secret': {
    setup: (k) => newWebhook(k, 'Hook 8'),
    run: async (k, id: string) => {
      const { res, body } = await k.rest(k.admin, 'POST', `/api/v2/webhooks/${id}/signing_secret`);
      k.issued.push(body.signing_secret.secret);
      return { res, records: [{ action: 'update', source_type: 'webhook', source_id: id, changed_fields: ['signing_secret'], source_label: 'Hook 8' }] };
    },
  },
} satisfies Record<string, Row>);

// API tokens (docs/api.md, "API tokens"): named by their first 10 characters, never in full
const CREATE_API_TOKEN = 'mutation($d: String) { createApiToken(input: { description: $d }) { id token } }';
const newApiToken = async (k: Kit, description: string) => {
  const made = (await k.gql(k.admin, CREATE_API_TOKEN, { d: description })).data.createApiToken as { id: string; token: string };
  k.issued.push(made.token);
  return made;
};
Object.assign(MUTATIONS, {
  createApiToken: {
    run: async (k) => {
      const { res, data } = await k.gql(k.admin, CREATE_API_TOKEN, { d: 'Audited token' });
      k.issued.push(data.createApiToken.token);
      return { res, records: [{ action: 'create', source_type: 'api_token', source_id: data.createApiToken.id, changed_fields: ['description'], source_label: label(data.createApiToken.token) }] };
    },
  },
  deleteApiToken: {
    setup: (k) => newApiToken(k, 'Token 2'),
    run: async (k, t: { id: string; token: string }) => {
      const { res } = await k.gql(k.admin, 'mutation($id: ID!) { deleteApiToken(id: $id) }', { id: t.id });
      return { res, records: [{ action: 'destroy', source_type: 'api_token', source_id: t.id, source_label: label(t.token) }] };
    },
  },
} satisfies Record<string, Row>);
Object.assign(ROUTES, {
  'POST /api/v2/api_tokens': {
    run: async (k) => {
      const { res, body } = await k.rest(k.admin, 'POST', '/api/v2/api_tokens', { api_token: { description: 'REST token' } });
      k.issued.push(body.api_token.token);
      return { res, records: [{ action: 'create', source_type: 'api_token', source_id: body.api_token.id, changed_fields: ['description'], source_label: label(body.api_token.token) }] };
    },
  },
  'DELETE /api/v2/api_tokens/:id': {
    setup: (k) => newApiToken(k, 'Token 3'),
    run: async (k, t: { id: string; token: string }) => {
      const { res } = await k.rest(k.admin, 'DELETE', `/api/v2/api_tokens/${t.id}`);
      return { res, records: [{ action: 'destroy', source_type: 'api_token', source_id: t.id, source_label: label(t.token) }] };
    },
  },
} satisfies Record<string, Row>);

const requestIdOf = (res: AnyResponse): string => {
  const h = res.headers as { get?: (name: string) => string | null };
  const id = typeof h.get === 'function' ? h.get('x-request-id') : (res.headers as Record<string, unknown>)['x-request-id'];
  expect(typeof id).toBe('string');
  return id as string;
};

interface AuditRow {
  id: string;
  actor_id: string | null;
  actor_name: string;
  action: string;
  source_type: string;
  source_id: string;
  source_label: string;
  changed_fields: string[] | null;
  change_description: string;
  via: string;
  request_id: string | null;
  ip_address: string | null;
}

describe('audit log: every change to clients, tokens and the directory writes its record (docs/api.md, "Audit log")', () => {
  let s: OAuthStack;
  let k: Kit;

  beforeAll(async () => {
    s = await startOAuthStack();
    const endUser = await s.ctx.createUser(s.admin.accountId, 'end_user');
    const headersOf = (who: TestUser | Headers): Headers => ('basic' in who && typeof who.basic === 'string' ? { authorization: who.basic } : (who as Headers));
    const issued: string[] = [];
    k = {
      s, admin: s.admin, agent: s.agent, endUser, issued,
      async gql(who, query, variables = {}) {
        const res = await s.ctx.graphql(query, variables, headersOf(who));
        const body = res.json();
        expect({ query, errors: body.errors }).toEqual({ query, errors: undefined });
        return { res, data: body.data };
      },
      async rest(who, method, url, payload) {
        const res = await s.ctx.inject({ method, url, headers: { ...headersOf(who), ...(payload ? { 'content-type': 'application/json' } : {}) }, payload });
        expect({ method, url, status: res.statusCode < 300 ? 'ok' : res.body }).toEqual({ method, url, status: 'ok' });
        return { res, body: res.body ? res.json() : undefined };
      },
      async client(input = {}) {
        const full = { name: 'Audited app', scopes: 'read write', redirectUris: ['https://app.example.com/cb'], ...input };
        const { data } = await k.gql(s.admin, CREATE_CLIENT, { input: full });
        issued.push(data.createOAuthClient.clientSecret);
        return { id: data.createOAuthClient.id, name: data.createOAuthClient.name, secret: data.createOAuthClient.clientSecret };
      },
      async token(clientId) {
        const { data } = await k.gql(s.admin, CREATE_TOKEN, { input: { clientId, scopes: ['read', 'write'] } });
        issued.push(data.createOAuthToken.token);
        return data.createOAuthToken;
      },
      grant: (c, params) => s.post('/oauth/tokens', params, { authorization: basicClientAuth(c.identifier, c.secret) }),
      async idOf(accessToken) {
        const current = await s.current(accessToken);
        expect(current.status).toBe(200);
        return String(current.body.token.id);
      },
    };
  });
  afterAll(() => s.close());

  const lastId = async () => BigInt((await s.ctx.db.sql<{ id: string | null }>('SELECT max(id)::text AS id FROM audit_logs'))[0].id ?? '0');
  const recordsSince = (id: bigint) =>
    s.ctx.db.sql<AuditRow>(
      `SELECT id::text, actor_id::text, actor_name, action, source_type, source_id::text, source_label, changed_fields, change_description, via, request_id, ip_address
         FROM audit_logs WHERE id > $1 ORDER BY id`,
      [String(id)],
    );

  /** Runs a row and compares what it wrote with what it expects. */
  async function check(row: Row, via: string) {
    const prepared = row.setup ? await row.setup(k) : undefined;
    const mark = await lastId();
    const { res, records } = await row.run(k, prepared);
    const requestId = requestIdOf(res);
    const order = (r: { source_type: string; source_id: string; action: string }) => `${r.source_type}:${r.source_id.padStart(20, '0')}:${r.action}`;
    const written = (await recordsSince(mark)).sort((a, b) => order(a).localeCompare(order(b)));
    const expected = records
      .map((e) => ({
        action: e.action,
        source_type: e.source_type,
        source_id: String(e.source_id),
        changed_fields: e.changed_fields ?? [],
        actor_id: e.actor === null ? null : String((e.actor ?? k.admin).id),
        actor_name: e.actor === null ? 'System' : expect.any(String),
        via: e.via ?? via,
        request_id: requestId,
        ip_address: '127.0.0.1',
        source_label: e.source_label ?? expect.any(String),
        change_description: e.says === undefined ? expect.any(String) : expect.stringContaining(e.says),
      }))
      .sort((a, b) => order(a).localeCompare(order(b)));
    expect(written.map(({ id: _id, ...rest }) => ({ ...rest, changed_fields: rest.changed_fields ?? [] }))).toEqual(expected);
  }

  describe('GraphQL mutations', () => {
    it('the table covers every field of the Mutation type, but the commented exemptions', () => {
      const fields = Object.keys(buildGraphQLSchema().getMutationType()!.getFields());
      expect(fields.filter((f) => !(f in MUTATIONS) && !(f in EXEMPT_MUTATIONS))).toEqual([]);
      // and names nothing the schema lacks
      expect([...Object.keys(MUTATIONS), ...Object.keys(EXEMPT_MUTATIONS)].filter((f) => !fields.includes(f))).toEqual([]);
    });

    it.each(Object.keys(MUTATIONS))('%s', async (field) => {
      await check(MUTATIONS[field], 'graphql');
    });

    it('an impersonating admin is the actor, and the description says on whose behalf', async () => {
      const { token } = await insertToken(s.ctx, k.admin, { scopes: ['read', 'write', 'impersonate'] });
      const own = await insertToken(s.ctx, k.endUser);
      await check(
        {
          run: async () => {
            const { res } = await k.gql({ ...bearer(token), 'x-on-behalf-of': k.endUser.email }, REVOKE_TOKEN, { id: String(own.id) });
            return { res, records: [{ action: 'destroy', source_type: 'oauth_token', source_id: own.id, actor: k.admin, says: `on behalf of ${k.endUser.email.split('@')[0]}, user ${k.endUser.id}` }] };
          },
        },
        'graphql',
      );
    });

    it('a change that fails writes nothing: an unknown id, an invalid input, a forbidden caller', async () => {
      const mark = await lastId();
      const c = await k.client();
      const afterSetup = await lastId();
      for (const [who, query, variables, code] of [
        [k.admin, UPDATE_CLIENT, { id: '99999999', input: { name: 'x' } }, 'NOT_FOUND'],
        [k.admin, UPDATE_CLIENT, { id: c.id, input: { name: '' } }, 'BAD_USER_INPUT'],
        [k.agent, DELETE_CLIENT, { id: c.id }, 'FORBIDDEN'],
        [k.admin, REVOKE_TOKEN, { id: '99999999' }, 'NOT_FOUND'],
        [k.admin, CREATE_TOKEN, { input: { clientId: '99999999', scopes: ['read'] } }, 'BAD_USER_INPUT'],
        [k.admin, END_GRACE, { id: c.id }, undefined], // no previous secret in a grace period: nothing changed
      ] as const) {
        const body = (await s.ctx.graphql(query, variables, { authorization: who.basic })).json();
        expect(body.errors?.[0]?.extensions?.code).toBe(code);
      }
      expect(afterSetup).toBeGreaterThan(mark);
      expect(await lastId()).toBe(afterSetup);
    });
  });

  describe('REST routes', () => {
    it('the table covers every route that changes something, but the commented exemptions', () => {
      const changing = restRoutes.filter((r) => r.method !== 'GET').flatMap((r) => r.paths.map((p) => `${r.method} /api/v2${p}`));
      expect(changing.filter((key) => !(key in ROUTES) && !(key in EXEMPT_ROUTES))).toEqual([]);
      expect([...Object.keys(ROUTES), ...Object.keys(EXEMPT_ROUTES)].filter((key) => !changing.includes(key))).toEqual([]);
    });

    it.each(Object.keys(ROUTES))('%s', async (route) => {
      await check(ROUTES[route], 'api');
    });
  });

  describe('OAuth endpoints', () => {
    it.each(Object.keys(OAUTH))('%s', async (what) => {
      await check(OAUTH[what], 'oauth');
    });

    it('refused grants, introspection and revoking an unknown or dead token write nothing', async () => {
      const c = await s.register({ type: 'confidential' });
      const t = await codeFlow(k, c);
      const auth = { authorization: basicClientAuth(c.identifier, c.secret) };
      await s.post('/oauth/revoke', { token: t.access_token }, auth);
      const mark = await lastId();
      expect((await k.grant(c, { grant_type: 'authorization_code', code: 'no-such-code', redirect_uri: REDIRECT })).body.error).toBe('invalid_grant');
      expect((await k.grant(c, { grant_type: 'refresh_token', refresh_token: 'no-such-refresh-token' })).body.error).toBe('invalid_grant');
      expect((await k.grant(c, { grant_type: 'client_credentials', scope: 'tickets:delete' })).body.error).toBe('invalid_scope');
      expect((await s.post('/oauth/introspect', { token: t.refresh_token }, auth)).status).toBe(200);
      expect((await s.post('/oauth/revoke', { token: t.access_token }, auth)).status).toBe(200); // revoked already
      expect((await s.post('/oauth/revoke', { token: 'never-issued-token-abcdefghijklmnopqrstuvwxyz' }, auth)).status).toBe(200);
      expect(await lastId()).toBe(mark);
    });
  });

  describe('the change and its record commit or roll back together', () => {
    const REFUSE = 'audit_logs_refuse';
    const refuseAuditInserts = async () => {
      await s.ctx.db.sql(`CREATE OR REPLACE FUNCTION ${REFUSE}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit log refused (test)'; END $$`);
      await s.ctx.db.sql(`CREATE TRIGGER ${REFUSE} BEFORE INSERT ON audit_logs FOR EACH ROW EXECUTE FUNCTION ${REFUSE}()`);
    };
    const allowAuditInserts = async () => {
      await s.ctx.db.sql(`DROP TRIGGER IF EXISTS ${REFUSE} ON audit_logs`);
      await s.ctx.db.sql(`DROP FUNCTION IF EXISTS ${REFUSE}()`);
    };
    afterAll(allowAuditInserts);

    const tokenRow = async (id: string | bigint) =>
      (await s.ctx.db.sql<{ revoked: boolean }>('SELECT revoked_at IS NOT NULL AS revoked FROM oauth_tokens WHERE id = $1', [String(id)]))[0];
    const count = async (table: string) => Number((await s.ctx.db.sql<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0].n);
    const INTERNAL = { error: 'InternalError', description: 'Internal error' };
    const graphqlFails = async (who: TestUser | Headers, query: string, variables: Record<string, unknown>) => {
      const res = await s.ctx.graphql(query, variables, 'basic' in who ? { authorization: (who as TestUser).basic } : (who as Headers));
      const body = res.json();
      expect(res.statusCode).not.toBe(500);
      expect(body.errors).toEqual([{ message: 'Internal error', locations: expect.any(Array), path: expect.any(Array), extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
      expect(res.body).not.toMatch(/audit log refused|stack|at .*\.ts/);
    };
    const restFails = async (method: 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: object) => {
      const res = await s.ctx.inject({ method, url, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) }, payload });
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 500, body: INTERNAL });
    };

    it('with audit inserts refused, every kind of change fails cleanly and stores nothing; allowed again, it works', async () => {
      const c = await k.client({ name: 'Kept' });
      const victim = await k.token(c.id);
      const agentToken = await insertToken(s.ctx, k.agent);
      const confidential = await s.register({ type: 'confidential' });
      const code = (await s.authorize(confidential, { verifier: RFC7636.verifier, user: k.agent })).get('code')!;
      const live = await codeFlow(k, confidential);
      const tokensBefore = await count('oauth_tokens');
      const clientsBefore = await count('oauth_clients');
      const auditBefore = await count('audit_logs');
      await refuseAuditInserts();
      try {
        // clients: recordAudit in the change's transaction
        await graphqlFails(k.admin, UPDATE_CLIENT, { id: c.id, input: { name: 'Renamed' } });
        await restFails('PUT', `/api/v2/oauth/clients/${c.id}`, { authorization: k.admin.basic }, { name: 'Renamed' });
        await graphqlFails(k.admin, CREATE_CLIENT, { input: { name: 'Never', scopes: 'read', redirectUris: ['https://app.example.com/cb'] } });
        await graphqlFails(k.admin, GENERATE_SECRET, { id: c.id, grace: 0 });
        await restFails('DELETE', `/api/v2/oauth/clients/${c.id}`, { authorization: k.admin.basic });
        // tokens: the record is part of the change's statement
        await graphqlFails(k.admin, CREATE_TOKEN, { input: { clientId: c.id, scopes: ['read'] } });
        await restFails('POST', '/api/v2/oauth/tokens', { authorization: k.admin.basic }, { token: { client_id: Number(c.id), scopes: ['read'] } });
        await graphqlFails(k.admin, REVOKE_TOKEN, { id: victim.id });
        await restFails('DELETE', '/api/v2/oauth/tokens/current', bearer(agentToken.token));
        // the grant endpoints: RFC 6749's server_error, nothing issued, the code still unused
        for (const params of [
          { grant_type: 'client_credentials' } as Record<string, string>,
          { grant_type: 'refresh_token', refresh_token: live.refresh_token },
          { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier },
        ]) {
          const res = await k.grant(confidential, params);
          expect({ grant: params.grant_type, status: res.status, body: res.body }).toEqual({ grant: params.grant_type, status: 500, body: { error: 'server_error', error_description: 'Internal error' } });
        }
        const revoked = await s.post('/oauth/revoke', { token: live.access_token }, { authorization: basicClientAuth(confidential.identifier, confidential.secret) });
        expect(revoked.status).toBe(500);

        expect(await count('oauth_tokens')).toBe(tokensBefore);
        expect(await count('oauth_clients')).toBe(clientsBefore);
        expect(await count('audit_logs')).toBe(auditBefore);
        const client = await s.ctx.db.sql<{ name: string }>('SELECT name FROM oauth_clients WHERE id = $1', [c.id]);
        expect(client).toEqual([{ name: 'Kept' }]);
        expect(await tokenRow(victim.id)).toEqual({ revoked: false });
        expect(await tokenRow(agentToken.id)).toEqual({ revoked: false });
        expect(await tokenRow(live.id)).toEqual({ revoked: false });
        expect((await s.current(live.access_token)).status).toBe(200);
        // the rotation rolled back: the client's one secret is still the one it was given
        expect(await s.ctx.db.sql('SELECT secret_prefix FROM oauth_client_secrets WHERE client_id = $1', [c.id])).toEqual([{ secret_prefix: c.secret.slice(0, 10) }]);
      } finally {
        await allowAuditInserts();
      }
      // the same changes go through now, each with its record
      const mark = await lastId();
      await k.gql(k.admin, UPDATE_CLIENT, { id: c.id, input: { name: 'Renamed' } });
      const refreshed = await k.grant(confidential, { grant_type: 'refresh_token', refresh_token: live.refresh_token });
      expect(refreshed.status).toBe(200);
      k.issued.push(refreshed.body.access_token, refreshed.body.refresh_token);
      const redeemed = await k.grant(confidential, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier });
      expect(redeemed.status).toBe(200);
      k.issued.push(redeemed.body.access_token, redeemed.body.refresh_token);
      expect((await recordsSince(mark)).map((r) => [r.action, r.source_type])).toEqual([['update', 'oauth_client'], ['create', 'oauth_token'], ['create', 'oauth_token']]);
    });
  });

  describe('what each change costs: SQL statements, each one round trip', () => {
    // Every statement, BEGIN and COMMIT included, on PostgreSQL and on PGlite alike
    // (test/oauth-tokens.graphql.test.ts checks the counter).
    const counted = async (send: () => Promise<unknown>) => {
      const before = s.ctx.db.statementCount();
      await send();
      return s.ctx.db.statementCount() - before;
    };

    it('the hot token paths keep one statement for the change and its record', async () => {
      const c = await k.client();
      const confidential = await s.register({ type: 'confidential' });
      const admin = { authorization: k.admin.basic };
      await k.rest(k.admin, 'POST', '/api/v2/oauth/tokens', { token: { client_id: Number(c.id), scopes: ['read'] } }); // Basic cache warm
      // the secret's last use is recorded once a minute: spend it
      k.issued.push((await k.grant(confidential, { grant_type: 'client_credentials' })).body.access_token);
      const flow = await codeFlow(k, confidential);
      const own = await insertToken(s.ctx, k.agent);
      const cases: [string, () => Promise<unknown>, number][] = [
        // authentication (1) + the insert with its record (1)
        ['REST POST /oauth/tokens', () => k.rest(admin, 'POST', '/api/v2/oauth/tokens', { token: { client_id: Number(c.id), scopes: ['read'] } }).then((r) => k.issued.push(r.body.token.token)), 2],
        ['GraphQL createOAuthToken', () => k.token(c.id), 2],
        ['REST DELETE /oauth/tokens/{id}', async () => k.rest(admin, 'DELETE', `/api/v2/oauth/tokens/${(await k.token(c.id)).id}`), 2 + 2],
        ['REST DELETE /oauth/tokens/current (Bearer)', () => k.rest(bearer(own.token), 'DELETE', '/api/v2/oauth/tokens/current'), 2],
        // the client from the grant cache (its check in the statement) + the token with its record: one statement
        ['client_credentials', () => k.grant(confidential, { grant_type: 'client_credentials' }).then((r) => k.issued.push(r.body.access_token)), 1],
        ['refresh_token', () => k.grant(confidential, { grant_type: 'refresh_token', refresh_token: flow.refresh_token }).then((r) => k.issued.push(r.body.access_token, r.body.refresh_token)), 1],
        ['/oauth/introspect', () => s.post('/oauth/introspect', { token: flow.access_token }, { authorization: basicClientAuth(confidential.identifier, confidential.secret) }), 1],
        // the client (never from the cache), the token's lookup, the revocation with its record
        ['/oauth/revoke (access token)', () => s.post('/oauth/revoke', { token: flow.access_token }, { authorization: basicClientAuth(confidential.identifier, confidential.secret) }), 3],
      ];
      for (const [what, send, statements] of cases) expect({ what, statements: await counted(send) }).toEqual({ what, statements });
    });

    it('the admin changes of clients: one transaction with the record', async () => {
      await k.client(); // Basic cache warm
      const c = await k.client();
      const doomed = await k.client();
      await k.token(doomed.id);
      const confidential = await s.register({ type: 'confidential' });
      const code = (await s.authorize(confidential, { verifier: RFC7636.verifier, user: k.agent })).get('code')!;
      k.issued.push((await k.grant(confidential, { grant_type: 'client_credentials' })).body.access_token); // the secret's use of this minute
      const cases: [string, () => Promise<unknown>, number][] = [
        // what, send, statements (auth + BEGIN … COMMIT)
        ['createOAuthClient: client, secret, record', () => k.client(), 1 + 5],
        ['updateOAuthClient: update, record', () => k.gql(k.admin, UPDATE_CLIENT, { id: c.id, input: { name: 'Costed' } }), 1 + 4],
        ['generateOAuthClientSecret: rotate, touch, record', () => k.gql(k.admin, GENERATE_SECRET, { id: c.id, grace: 60 }).then((r) => k.issued.push(r.data.generateOAuthClientSecret.clientSecret)), 1 + 5],
        ['endOAuthClientSecretGracePeriod: end, read, record', () => k.gql(k.admin, END_GRACE, { id: c.id }), 1 + 5],
        ['deleteOAuthClient: lock, revoke tokens, delete, record', () => k.gql(k.admin, DELETE_CLIENT, { id: doomed.id }), 1 + 6],
        // the client's lookup, then BEGIN, consume the code, the token with its record, COMMIT
        ['authorization_code', () => k.grant(confidential, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier }).then((r) => k.issued.push(r.body.access_token, r.body.refresh_token)), 1 + 4],
        // a replay: the lookup, the redeeming transaction that finds the code used (BEGIN, consume, COMMIT), then the family's: BEGIN, grant, tokens, record, COMMIT
        ['a replayed code', () => k.grant(confidential, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: RFC7636.verifier }), 1 + 3 + 5],
      ];
      for (const [what, send, statements] of cases) expect({ what, statements: await counted(send) }).toEqual({ what, statements });
    });
  });

  describe('no secret in the audit log', () => {
    it('no column of any record holds a client secret, an access token or a refresh token handed out above', async () => {
      const rows = await s.ctx.db.sql<Record<string, unknown>>('SELECT * FROM audit_logs');
      expect(rows.length).toBeGreaterThan(30);
      const dump = JSON.stringify(rows, (_key, v) => (typeof v === 'bigint' ? String(v) : v));
      const secrets = [...new Set(k.issued.filter((x): x is string => typeof x === 'string'))];
      expect(secrets.length).toBeGreaterThan(30);
      for (const secret of secrets) {
        expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
        // not the whole value, nor anything longer than the 10-character prefix
        expect({ secret, leaked: dump.includes(secret.slice(0, 11)) }).toEqual({ secret, leaked: false });
      }
      // labels of tokens are the prefix and "..."
      for (const row of rows.filter((r) => r.source_type === 'oauth_token')) expect(row.source_label).toMatch(/^[A-Za-z0-9_-]{10}\.\.\.$/);
    });
  });
});
