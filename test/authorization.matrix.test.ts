import { randomUUID } from 'node:crypto';
import { getNamedType, isObjectType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// The authorization matrix (docs/api.md, "Scopes and roles"), generated from the schema: every root
// field, with every field path below it up to depth 3, for every kind of caller.
// RULES below states the expected outcome of each field of each type; a type or
// field that it does not classify fails the first test, so nothing new reaches
// the schema without a decision. The expectations are written here, from the
// contract, not read from the service's own policy.

type Who = 'any' | 'agent' | 'admin';
/** a field that returns records: who may reach them, and what a token must grant */
interface Gate {
  who: Who;
  access: 'read' | 'write' | 'none';
  /** the presented token itself: Basic gets 400 */
  bearerOnly?: true;
}
/** per type: the fields shown with their parent (scalars and value objects), and the gated fields */
interface TypeRules {
  inherit: string;
  gates?: Record<string, Gate>;
}

const read = (who: Who): Gate => ({ who, access: 'read' });
const write = (who: Who): Gate => ({ who, access: 'write' });
const itself: Gate = { who: 'any', access: 'none', bearerOnly: true };

const RULES: Record<string, TypeRules> = {
  Query: {
    inherit: '',
    gates: {
      oauthClients: read('admin'),
      oauthClient: read('admin'),
      oauthTokens: read('admin'),
      // by id: anyone, on their own tokens (admins: the account's)
      oauthToken: read('any'),
      currentOAuthToken: itself,
      me: read('any'),
      callbackRequests: read('agent'),
      callbackRequest: read('agent'),
      // agents' availability and Talk's stats: agents and admins
      agentAvailability: read('agent'),
      currentQueueActivity: read('agent'),
      agentsActivity: read('agent'),
      phoneNumbers: read('agent'),
      phoneNumber: read('agent'),
      phoneNumberCount: read('agent'),
      groups: read('agent'),
      group: read('agent'),
      groupCount: read('agent'),
      groupMemberships: read('agent'),
      groupMembershipCount: read('agent'),
      groupMembership: read('agent'),
      // the account's users: admins; by id: anyone, themselves (admins: the account's)
      users: read('admin'),
      user: read('any'),
      accountSettings: read('admin'),
      // the audit log: admins (a token's `auditlogs:read` grants it too; this matrix's tokens carry read/write only)
      auditLogs: read('admin'),
      auditLog: read('admin'),
      // webhooks and their signing secrets: admins
      webhooks: read('admin'),
      webhook: read('admin'),
      webhookSigningSecret: read('admin'),
      // what webhooks sent: as webhooks are read
      webhookInvocations: read('admin'),
      webhookInvocationAttempts: read('admin'),
    },
  },
  Mutation: {
    inherit: '',
    gates: {
      createOAuthClient: write('admin'),
      updateOAuthClient: write('admin'),
      deleteOAuthClient: write('admin'),
      generateOAuthClientSecret: write('admin'),
      endOAuthClientSecretGracePeriod: write('admin'),
      createOAuthToken: write('admin'),
      revokeOAuthToken: write('any'),
      revokeCurrentOAuthToken: itself,
      // a person's own authorized apps: anyone, their own
      revokeAuthorizedApp: write('any'),
      createCallbackRequest: write('agent'),
      // the lifecycle: agents and admins; which request each may act on is the lifecycle's rule (the offered agent, the creator…)
      acceptCallbackRequest: write('agent'),
      declineCallbackRequest: write('agent'),
      reportCallbackOutcome: write('agent'),
      cancelCallbackRequest: write('agent'),
      setAgentAvailability: write('agent'),
      createUser: write('admin'),
      updateUser: write('admin'),
      deleteUser: write('admin'),
      // anyone their own password (with the previous one); admins their account's users'
      setUserPassword: write('any'),
      createGroup: write('admin'),
      updateGroup: write('admin'),
      deleteGroup: write('admin'),
      createGroupMembership: write('admin'),
      deleteGroupMembership: write('admin'),
      createPhoneNumber: write('admin'),
      updatePhoneNumber: write('admin'),
      deletePhoneNumber: write('admin'),
      updateAccountSettings: write('admin'),
      createWebhook: write('admin'),
      updateWebhook: write('admin'),
      deleteWebhook: write('admin'),
      resetWebhookSigningSecret: write('admin'),
      testWebhook: write('admin'),
    },
  },
  // a token shows its own scalar fields; its client only as oauthClient(id) would, its user as `me` or an admin would
  OAuthToken: {
    inherit: 'id token clientId userId scopes createdAt expiresAt usedAt refreshToken refreshTokenExpiresAt grantType url',
    gates: { client: read('admin'), user: read('any') },
  },
  OAuthClient: {
    inherit: 'id name company clientIdentifier clientSecret clientType redirectUris scopes agentId createDate updateDate description logoUrl',
    // its secrets are client data: as oauthClient(id) shows them
    gates: { tokens: read('admin'), secrets: read('admin') },
  },
  OAuthClientSecret: { inherit: 'id prefix createdAt lastUsedAt expiresAt' },
  OAuthTokenConnection: { inherit: 'edges pageInfo totalCount' },
  OAuthTokenEdge: { inherit: 'cursor node' },
  PageInfo: { inherit: 'hasNextPage hasPreviousPage startCursor endCursor' },
  User: { inherit: 'id name email role active createdAt updatedAt url' },
  UserConnection: { inherit: 'edges pageInfo totalCount' },
  UserEdge: { inherit: 'cursor node' },
  Me: {
    inherit: 'id name email role active createdAt updatedAt url account authenticatedVia',
    // your authorized apps: anyone, their own, with read
    gates: { authorizedApps: read('any') },
  },
  AuthorizedApp: { inherit: 'id kind client scopes grantedAt lastUsedAt' },
  AuthorizedAppClient: { inherit: 'id name company' },
  Account: { inherit: 'id name omnichannelRouting' },
  AccountSettings: { inherit: 'omnichannelRouting callbackOfferTimeout callbackRetryDelay callbackMaxAttempts wrapUpTime updatedAt' },
  CallbackRequest: {
    inherit:
      'id phoneNumberId requesterPhoneNumber requestedGroupIds routedGroupIds status queuePosition estimatedWaitTime agentId attempts createdById createdAt updatedAt completedAt history rateLimit',
  },
  CallbackHistoryStep: { inherit: 'status agentId reason at' },
  AgentAvailability: { inherit: 'agentId agentState callStatus via' },
  QueueActivity: { inherit: 'agentsOnline callbacksWaiting callsWaiting averageWaitTime longestWaitTime' },
  AgentActivity: { inherit: 'agentId name agentState callStatus availableTime callsAccepted callsMissed callbacksCompleted averageTalkTime' },
  CallbackRateLimit: { inherit: 'limit remaining' },
  CallbackRequestConnection: { inherit: 'edges pageInfo totalCount' },
  CallbackRequestEdge: { inherit: 'cursor node' },
  PhoneNumber: { inherit: 'id number displayNumber nickname countryCode capabilities callbackEnabled createdAt updatedAt url' },
  PhoneNumberCapabilities: { inherit: 'voice sms mms' },
  Group: { inherit: 'id name description createdAt updatedAt url' },
  GroupMembership: { inherit: 'id userId groupId default createdAt updatedAt url' },
  AuditLog: {
    inherit: 'id action actionLabel actorId actorName sourceId sourceType sourceLabel changeDescription changedFields via requestId ipAddress createdAt url',
  },
  AuditLogConnection: { inherit: 'edges pageInfo totalCount' },
  AuditLogEdge: { inherit: 'cursor node' },
  Webhook: { inherit: 'id name description endpoint httpMethod requestFormat status subscriptions createdById updatedById createdAt updatedAt' },
  WebhookConnection: { inherit: 'edges pageInfo totalCount' },
  WebhookEdge: { inherit: 'cursor node' },
  WebhookSigningSecret: { inherit: 'algorithm secret' },
  WebhookInvocation: { inherit: 'id webhookId eventId eventType status attempts reason createdAt updatedAt completedAt' },
  WebhookInvocationConnection: { inherit: 'edges pageInfo totalCount' },
  WebhookInvocationEdge: { inherit: 'cursor node' },
  WebhookTestResponse: { inherit: 'status body error' },
  WebhookInvocationAttempt: { inherit: 'id invocationId startedAt durationMs statusCode error response' },
  // live events (over WebSocket: test/subscriptions.test.ts runs this gate for each kind of caller it names)
  // the typed feeds of dashboards: agents and admins (test/voice-subscriptions.test.ts runs them over graphql-ws)
  Subscription: {
    inherit: '',
    gates: { accountEvents: read('admin'), callbackRequestUpdated: read('agent'), queueActivityUpdated: read('agent'), agentAvailabilityChanged: read('agent') },
  },
  AccountEvent: { inherit: 'id type subject time detail event zendeskEventVersion' },
};

const WEBHOOK_INPUT = '{ name: "matrix", endpoint: "http://127.0.0.1:9/m", httpMethod: POST, requestFormat: JSON, status: ACTIVE }';

type Principal = 'admin' | 'agent' | 'endUser' | 'impersonated';
type Credential = 'basic' | 'read' | 'writeOnly' | 'invalidScope';
const PRINCIPALS: Principal[] = ['admin', 'agent', 'endUser', 'impersonated'];
const CREDENTIALS: Credential[] = ['basic', 'read', 'writeOnly', 'invalidScope'];
const TOKEN_SCOPES: Record<Exclude<Credential, 'basic'>, string[]> = {
  read: ['read'],
  writeOnly: ['write'],
  invalidScope: ['read', 'write', 'tickets:delete'],
};

type Outcome = 'ok' | 'FORBIDDEN' | 'BAD_REQUEST';

/** What the contract says one gate does for one caller. */
function gateOutcome(gate: Gate, principal: Principal, credential: Credential): Outcome {
  const role = principal === 'admin' ? 'admin' : principal === 'agent' ? 'agent' : 'end_user';
  if (gate.who === 'admin' && role !== 'admin') return 'FORBIDDEN';
  if (gate.who === 'agent' && role === 'end_user') return 'FORBIDDEN';
  if (credential === 'basic') return gate.bearerOnly ? 'BAD_REQUEST' : 'ok';
  if (gate.access === 'none') return 'ok';
  const granted = credential === 'read' ? 'read' : 'write';
  return gate.access === granted ? 'ok' : 'FORBIDDEN';
}

/** A request that fails as a whole, before any field (authentication). */
function requestOutcome(principal: Principal, credential: Credential): Outcome | undefined {
  if (credential === 'invalidScope') return 'FORBIDDEN'; // an invalid scope (docs/api.md, "Scopes and roles"): every request
  if (principal === 'impersonated' && credential === 'basic') return 'FORBIDDEN'; // X-On-Behalf-Of with Basic
  return undefined;
}

const MAX_DEPTH = 3;
const LEAVES_PER_PART = 8;
const schema = buildGraphQLSchema();

function objectFields(type: GraphQLObjectType): GraphQLField<unknown, unknown>[] {
  return Object.values(type.getFields());
}

/** Every field path below a root field (root included), with the type each segment belongs to. */
function paths(root: GraphQLObjectType, field: GraphQLField<unknown, unknown>): { path: string[]; owners: string[] }[] {
  const out: { path: string[]; owners: string[] }[] = [];
  const walk = (owner: GraphQLObjectType, f: GraphQLField<unknown, unknown>, path: string[], owners: string[], depth: number) => {
    const here = { path: [...path, f.name], owners: [...owners, owner.name] };
    out.push(here);
    const named = getNamedType(f.type);
    if (isObjectType(named) && depth < MAX_DEPTH) for (const child of objectFields(named)) walk(named, child, here.path, here.owners, depth + 1);
  };
  walk(root, field, [], [], 1);
  return out;
}

function expectedAt(path: { path: string[]; owners: string[] }, principal: Principal, credential: Credential): { outcome: Outcome; at: string[] } {
  for (let i = 0; i < path.path.length; i++) {
    const gate = RULES[path.owners[i]].gates?.[path.path[i]];
    if (!gate) continue;
    const outcome = gateOutcome(gate, principal, credential);
    if (outcome !== 'ok') return { outcome, at: path.path.slice(0, i + 1) };
  }
  return { outcome: 'ok', at: path.path };
}

interface GraphQLErrorJson {
  path?: (string | number)[];
  extensions?: { code?: string };
}
const named = (p: (string | number)[] | undefined) => (p ?? []).filter((s): s is string => typeof s === 'string');

/** The values at a path of the answer (lists flattened); [] when nothing is there. */
function valuesAt(data: unknown, path: string[]): unknown[] {
  let current: unknown[] = [data];
  for (const key of path) {
    current = current
      .flatMap((v) => (Array.isArray(v) ? v : [v]))
      .filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object')
      .map((v) => v[key])
      .filter((v) => v !== undefined);
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

describe('authorization matrix: every field path up to depth 3 × every kind of caller (docs/api.md, "Scopes and roles")', () => {
  let ctx: TestContext;
  let users: Record<'admin' | 'agent' | 'endUser', TestUser>;
  let account: bigint;
  let clientId: bigint;
  let phoneNumberId: bigint;
  let auditLogId: bigint;
  let groupId: bigint;
  let membershipId: bigint;
  let webhookId: string;
  let invocationId: bigint;
  let callbackId: bigint;
  let fresh = 0;
  /** Authorization headers, per caller; tokens are fresh for mutations (revokeCurrentOAuthToken kills them) */
  let headersFor: (principal: Principal, credential: Credential) => Promise<{ headers: Record<string, string>; ownTokenId: bigint }>;

  beforeAll(async () => {
    ctx = await createTestApp({ limits: { callbackRequests: 100_000 } });
    account = await ctx.createAccount();
    users = {
      admin: await ctx.createUser(account, 'admin'),
      agent: await ctx.createUser(account, 'agent'),
      endUser: await ctx.createUser(account, 'end_user'),
    };
    // a client with a token of each user, so that every nested list has something to resolve
    const seed = await insertToken(ctx, users.admin);
    clientId = seed.clientId;
    for (const u of [users.agent, users.endUser]) {
      await ctx.db.prisma.oAuthToken.create({
        data: { accountId: account, clientId, userId: u.id, tokenHash: `seed-${u.id}`, tokenPrefix: 'seedseedse', scopes: ['read'] },
      });
    }
    const phone = await ctx.db.prisma.voicePhoneNumber.create({ data: { accountId: account, number: '+14155552671' } });
    phoneNumberId = phone.id;
    groupId = (await ctx.db.prisma.group.create({ data: { accountId: account, name: 'Support' } })).id;
    // a member, so that the membership lists have something to show
    membershipId = (await ctx.db.prisma.groupMembership.create({ data: { accountId: account, userId: users.agent.id, groupId } })).id;
    // a change, so that the audit log has a record to show
    const created = await ctx.graphql('mutation { createOAuthClient(input: { name: "audited", scopes: "read", redirectUris: ["https://example.com/cb"] }) { id } }', {}, { authorization: users.admin.basic });
    expect(created.json().errors).toBeUndefined();
    auditLogId = (await ctx.db.prisma.auditLog.findFirstOrThrow({ where: { accountId: account } })).id;
    webhookId = (await ctx.graphql(`mutation { createWebhook(input: ${WEBHOOK_INPUT}) { id } }`, {}, { authorization: users.admin.basic })).json().data.createWebhook.id;
    // an invocation of it with an attempt, so that the invocation lists have something to show
    invocationId = (await ctx.db.prisma.webhookInvocation.create({
      data: { accountId: account, webhookId: BigInt(webhookId), eventId: randomUUID(), eventType: 'zen:event-type:oauth_client.created', status: 'success', attempts: 1 },
    })).id;
    await ctx.db.prisma.webhookInvocationAttempt.create({ data: { accountId: account, invocationId, startedAt: new Date(), durationMs: 3, statusCode: 200, response: 'ok' } });
    callbackId = (await ctx.db.prisma.callbackRequest.create({
      data: { accountId: account, phoneNumberId, requesterPhoneNumber: '+14155552672', requestedGroupIds: [], routedGroupIds: [], createdById: users.agent.id },
    })).id;
    // a step of history, so that its list has something to show
    await ctx.db.prisma.callbackRequestHistory.create({ data: { accountId: account, callbackRequestId: callbackId, status: 'queued' } });

    headersFor = async (principal, credential) => {
      const user = users[principal === 'impersonated' ? 'admin' : principal];
      const onBehalf: Record<string, string> = principal === 'impersonated' ? { 'x-on-behalf-of': users.endUser.email } : {};
      // the caller's own token, for oauthToken(id) / revokeOAuthToken(id): the impersonated end user's is the end user's
      const owner = principal === 'impersonated' ? users.endUser : user;
      const own = await insertToken(ctx, owner, { scopes: ['read'] });
      if (credential === 'basic') return { headers: { authorization: user.basic, ...onBehalf }, ownTokenId: own.id };
      const scopes = [...TOKEN_SCOPES[credential], ...(principal === 'impersonated' ? ['impersonate'] : [])];
      const presented = await insertToken(ctx, user, { scopes });
      return { headers: { authorization: `Bearer ${presented.token}`, ...onBehalf }, ownTokenId: own.id };
    };
  });
  afterAll(() => ctx.close());

  it('classifies every type and field of the schema', () => {
    const unclassified: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      const rules = RULES[type.name];
      if (!rules) {
        unclassified.push(`type ${type.name}`);
        continue;
      }
      const known = new Set([...rules.inherit.split(' ').filter(Boolean), ...Object.keys(rules.gates ?? {})]);
      for (const f of objectFields(type)) if (!known.has(f.name)) unclassified.push(`${type.name}.${f.name}`);
      for (const k of known) if (!type.getFields()[k]) unclassified.push(`${type.name}.${k} (in RULES, not in the schema)`);
    }
    expect(unclassified).toEqual([]);
  });

  /** A fresh callback request in `status`: created by `who`, and offered to or dialing for them. */
  async function callbackOf(who: TestUser, status: 'queued' | 'offered' | 'dialing'): Promise<bigint> {
    const request = await ctx.db.prisma.callbackRequest.create({
      data: {
        accountId: account, phoneNumberId, requesterPhoneNumber: '+14155552674', requestedGroupIds: [], routedGroupIds: [], status, createdById: who.id,
        agentId: status === 'queued' ? null : who.id, attempts: status === 'dialing' ? 1 : 0,
      },
    });
    const state = { agentState: 'offline' as const, callStatus: status === 'dialing' ? ('on_call' as const) : null, offeredRequestId: status === 'offered' ? request.id : null };
    await ctx.db.prisma.agentAvailability.upsert({ where: { accountId_userId: { accountId: account, userId: who.id } }, create: { accountId: account, userId: who.id, ...state }, update: state });
    return request.id;
  }

  /** Arguments of a root field, made fresh for each request where the operation consumes them. */
  async function argsFor(field: string, ownTokenId: bigint, principal: Principal): Promise<string> {
    const freshClient = async () => (await insertToken(ctx, users.admin)).clientId;
    // the caller's own user: the impersonated end user's is the end user
    const self = users[principal === 'impersonated' ? 'endUser' : principal];
    const freshNumber = () => `+1251871${String(7100 + ++fresh).padStart(4, '0')}`;
    switch (field) {
      case 'user':
        return `(id: "${self.id}")`;
      case 'users':
        return '(first: 5)';
      case 'createUser':
        return `(input: { name: "matrix", email: "matrix-${++fresh}@example.com" })`;
      case 'updateUser':
        return `(id: "${(await ctx.createUser(account, 'agent')).id}", input: { name: "renamed" })`;
      case 'deleteUser':
        return `(id: "${(await ctx.createUser(account, 'agent')).id}")`;
      case 'setUserPassword':
        // their own, set to what it was: the caller's Basic credentials keep working
        return `(id: "${self.id}", password: "${self.password}", previousPassword: "${self.password}")`;
      case 'group':
        return `(id: "${groupId}")`;
      case 'webhook':
      case 'webhookSigningSecret':
      case 'resetWebhookSigningSecret':
      case 'testWebhook':
        return `(id: "${webhookId}")`;
      case 'webhookInvocations':
        return `(webhookId: "${webhookId}")`;
      case 'webhookInvocationAttempts':
        return `(webhookId: "${webhookId}", invocationId: "${invocationId}")`;
      case 'createWebhook':
        return `(input: ${WEBHOOK_INPUT})`;
      case 'updateWebhook':
        return `(id: "${webhookId}", input: { name: "renamed" })`;
      case 'deleteWebhook':
        return `(id: "${(await ctx.graphql(`mutation { createWebhook(input: ${WEBHOOK_INPUT}) { id } }`, {}, { authorization: users.admin.basic })).json().data.createWebhook.id}")`;
      case 'createGroup':
        return '(input: { name: "matrix" })';
      case 'updateGroup':
        return `(id: "${groupId}", input: { name: "renamed" })`;
      case 'deleteGroup':
        return `(id: "${(await ctx.db.prisma.group.create({ data: { accountId: account, name: 'doomed' } })).id}")`;
      case 'groupMembership':
        return `(id: "${membershipId}")`;
      case 'groupMemberships':
      case 'groupMembershipCount':
        return `(groupId: "${groupId}")`;
      case 'createGroupMembership':
        return `(input: { userId: "${(await ctx.createUser(account, 'agent')).id}", groupId: "${groupId}" })`;
      case 'deleteGroupMembership': {
        const member = await ctx.createUser(account, 'agent');
        return `(id: "${(await ctx.db.prisma.groupMembership.create({ data: { accountId: account, userId: member.id, groupId } })).id}")`;
      }
      case 'phoneNumber':
        return `(id: "${phoneNumberId}")`;
      case 'createPhoneNumber':
        return `(input: { number: "${freshNumber()}" })`;
      case 'updatePhoneNumber':
        return `(id: "${phoneNumberId}", input: { nickname: "renamed" })`;
      case 'deletePhoneNumber':
        return `(id: "${(await ctx.db.prisma.voicePhoneNumber.create({ data: { accountId: account, number: freshNumber() } })).id}")`;
      case 'updateAccountSettings':
        return '(input: { omnichannelRouting: false })';
      case 'oauthClient':
        return `(id: "${clientId}")`;
      case 'oauthToken':
      case 'revokeOAuthToken':
        return `(id: "${ownTokenId}")`;
      case 'revokeAuthorizedApp':
        // the caller's own token, an entry of their authorized apps (of no grant)
        return `(id: "token-${ownTokenId}")`;
      case 'oauthTokens':
        return '(first: 5)';
      case 'callbackRequests':
      case 'auditLogs':
        return '(first: 5)';
      case 'auditLog':
        return `(id: "${auditLogId}")`;
      case 'createOAuthClient':
        return '(input: { name: "matrix", scopes: "read write", redirectUris: ["https://example.com/cb"] })';
      case 'updateOAuthClient':
        return `(id: "${await freshClient()}", input: { name: "renamed" })`;
      case 'deleteOAuthClient':
      case 'generateOAuthClientSecret':
      case 'endOAuthClientSecretGracePeriod':
        return `(id: "${await freshClient()}")`;
      case 'createOAuthToken':
        // write: what every caller that may create tokens covers (a write-only token mints no read)
        return `(input: { clientId: "${clientId}", scopes: ["write"] })`;
      case 'createCallbackRequest':
        return `(input: { phoneNumberId: "${phoneNumberId}", requesterPhoneNumber: "+14155552673" })`;
      case 'callbackRequest':
        return `(id: "${callbackId}")`;
      case 'agentAvailability':
        return `(agentId: "${self.id}")`;
      case 'setAgentAvailability':
        // away: no routing decision on the way
        return `(agentId: "${self.id}", input: { agentState: AWAY })`;
      case 'acceptCallbackRequest':
      case 'declineCallbackRequest':
        // a request offered to the caller (the agent offline: declining routes nothing)
        return `(id: "${await callbackOf(self, 'offered')}")`;
      case 'reportCallbackOutcome':
        return `(id: "${await callbackOf(self, 'dialing')}", outcome: ANSWERED)`;
      case 'cancelCallbackRequest':
        return `(id: "${await callbackOf(self, 'queued')}")`;
      default:
        return '';
    }
  }

  const roots = (['Query', 'Mutation'] as const).flatMap((kind) => {
    const type = kind === 'Query' ? schema.getQueryType()! : schema.getMutationType()!;
    return objectFields(type).map((field) => ({ kind, type, field }));
  });
  const callers = PRINCIPALS.flatMap((p) => CREDENTIALS.map((c) => [p, c] as const));

  /**
   * The selection below a root field, in parts that each fit the cost budget: at
   * each level the scalar fields together, and each field that returns objects on
   * its own, down to MAX_DEPTH. Each part lists the paths it covers.
   */
  function parts(type: GraphQLObjectType, depth: number): { body: string; covers: string[][] }[] {
    const fields = objectFields(type);
    const leaves = fields.filter((f) => !isObjectType(getNamedType(f.type))).map((f) => f.name);
    // scalars in groups of LEAVES_PER_PART: a list of lists of them stays within the cost budget
    const out: { body: string; covers: string[][] }[] = [];
    for (let i = 0; i < leaves.length; i += LEAVES_PER_PART) {
      const group = leaves.slice(i, i + LEAVES_PER_PART);
      out.push({ body: group.join(' '), covers: group.map((l) => [l]) });
    }
    for (const f of fields) {
      const inner = getNamedType(f.type);
      if (!isObjectType(inner)) continue;
      if (depth >= MAX_DEPTH) out.push({ body: `${f.name} { __typename }`, covers: [[f.name]] });
      else for (const sub of parts(inner, depth + 1)) out.push({ body: `${f.name} { ${sub.body} }`, covers: [[f.name], ...sub.covers.map((c) => [f.name, ...c])] });
    }
    return out;
  }
  function rootParts(field: GraphQLField<unknown, unknown>): { body: string; covers: string[][] }[] {
    const type = getNamedType(field.type);
    if (!isObjectType(type)) return [{ body: '', covers: [] }];
    return parts(type, 2).map((p) => ({ body: ` { ${p.body} }`, covers: p.covers }));
  }

  it('checks every field path to depth 3 in some request', () => {
    for (const { type, field } of roots) {
      const covered = new Set(['', ...rootParts(field).flatMap((p) => p.covers.map((c) => c.join('.')))]);
      const missed = paths(type, field).filter((p) => !covered.has(p.path.slice(1).join('.')));
      expect(missed.map((p) => p.path.join('.'))).toEqual([]);
    }
    expect(roots.length).toBeGreaterThanOrEqual(17);
  });

  describe.each(roots.map((r) => [`${r.kind}.${r.field.name}`, r] as const))('%s', (_name, { kind, type, field }) => {
    it.each(callers.flatMap(([p, c]) => rootParts(field).map((part) => [p, c, part.body || '-', part] as const)))(
      'as %s with %s credentials:%s',
      async (principal, credential, _children, part) => {
        const { headers, ownTokenId } = await headersFor(principal, credential);
        const document = `${kind === 'Query' ? 'query' : 'mutation'} { ${field.name}${await argsFor(field.name, ownTokenId, principal)}${part.body} }`;
        const res = await ctx.graphql(document, {}, headers);
        expect(res.statusCode).not.toBe(500);
        const answer = res.json() as { data?: Record<string, unknown> | null; errors?: GraphQLErrorJson[] };
        const errors = answer.errors ?? [];

        const whole = requestOutcome(principal, credential);
        if (whole) {
          expect(answer.data ?? null).toBeNull();
          expect(errors.map((e) => e.extensions?.code)).toEqual([whole]);
          return;
        }
        const covered = new Set(['', ...part.covers.map((c) => c.join('.'))]);
      for (const p of paths(type, field).filter((p) => covered.has(p.path.slice(1).join('.')))) {
          const expected = expectedAt(p, principal, credential);
          const atOrAbove = errors.filter((e) => {
            const ep = namedPath(e);
            return ep.length <= p.path.length && ep.every((s, i) => s === p.path[i]);
          });
          if (expected.outcome === 'ok') {
            // no error on the way down, and the field really resolved for at least one record
            expect({ path: p.path.join('.'), errors: atOrAbove }).toEqual({ path: p.path.join('.'), errors: [] });
            if (!mayBeEmpty(p.path, principal)) {
              expect({ path: p.path.join('.'), resolved: valuesAt(answer.data, p.path.slice(0, -1)).length > 0 }).toEqual({ path: p.path.join('.'), resolved: true });
            }
          } else {
            const codes = errors.filter((e) => namedPath(e).join('.') === expected.at.join('.')).map((e) => e.extensions?.code);
            expect({ path: p.path.join('.'), at: expected.at.join('.'), codes: [...new Set(codes)] }).toEqual({
              path: p.path.join('.'),
              at: expected.at.join('.'),
              codes: [expected.outcome],
            });
            // nothing of a refused field reaches the caller
            expect({ path: expected.at.join('.'), values: valuesAt(answer.data, expected.at).filter((v) => v !== null) }).toEqual({
              path: expected.at.join('.'),
              values: [],
            });
          }
        }
      },
    );
  });
});

/**
 * Paths with nothing below them by nature: a client just created has no tokens,
 * and the user of the token presented by an impersonating admin is the admin,
 * whom the impersonated end user does not see (null, no error).
 */
function mayBeEmpty(path: string[], principal: Principal): boolean {
  if (path[0] === 'createOAuthClient' && path[1] === 'tokens') return true;
  // a request just created has no history yet
  if (path[0] === 'createCallbackRequest' && path[1] === 'history') return true;
  return principal === 'impersonated' && path[0] === 'currentOAuthToken' && path[1] === 'user' && path.length > 2;
}

function namedPath(e: GraphQLErrorJson): string[] {
  return named(e.path);
}
