import { randomUUID } from 'node:crypto';
import type { CrossTenantReason, TenantSql } from '../src/db/tenant-sql';
import { recordAudit, systemActor } from '../src/domain/audit/audit-log.repository';
import { newWebhook, type TenantFixture } from './helpers/tenant-fixtures';
import { RANGE_START, RETENTION_TABLES } from '../src/domain/retention/retention.repository';

// The isolation case of every repository method (test/tenant-isolation.test.ts
// checks that the list is complete: a method without a case fails the suite).
// run(repo, caller, target): the call, from the caller's account, on the ids of
// the target's rows. `nothing`: what the caller must get back (a value, or a
// check); the caller (B) has one row of each kind, the target (A) two of the
// groups, phone numbers and end users. `writesOwn`: an insert that names no
// other row, which may change the caller's own rows. `crossTenant`: a statement
// that spans accounts by design (src/db/tenant-sql.ts).

type Repo = any;
export interface IsolationCase {
  run(repo: Repo, caller: TenantFixture, target: TenantFixture, sql: TenantSql): Promise<unknown>;
  nothing?: ((result: any, target: TenantFixture) => void) | null | boolean | number | unknown[] | { [key: string]: unknown };
  writesOwn?: true;
  crossTenant?: CrossTenantReason;
}

const scope = (f: TenantFixture) => ({ accountId: f.account });
const notOf = (target: TenantFixture) => (result: any) => expect(result.accountId).not.toBe(target.account);
const noneOf = (target: TenantFixture, items: any[]) => expect(items.map((i) => i.accountId)).not.toContain(target.account);
const page = { page: 1, perPage: 100 };
const audit = (f: TenantFixture) => ({ actor: systemActor(f.account), description: 'isolation' });
const grantAudit = { origin: { via: 'oauth' as const }, description: 'isolation' };
const newToken = () => ({
  token: 'isolation-new-access-0123456789', tokenHash: 'isolation-new-access', expiresIn: 3600,
  refresh: { token: 'isolation-new-refresh-0123456789', tokenHash: 'isolation-new-refresh', expiresIn: 2_592_000 },
});
const secret = { secret: 'isolation-new-secret-0123456789', secretHash: 'isolation-new-secret' };
const window = { bucket: 'isolation-case', limit: 30, seconds: 600 };
const throttle = [{ key: 'isolation-key', limit: 10 }];
const anHourAgo = () => new Date(Date.now() - 3_600_000);

export const CASES: Record<string, IsolationCase> = {
  'AccountRepository.find': { run: (r, c) => r.find(scope(c)), nothing: (res, t) => expect(res.id).not.toBe(t.account) },
  'AccountRepository.updateSettings': { writesOwn: true, run: (r, c) => r.updateSettings(scope(c), { omnichannelRouting: true }), nothing: (res, t) => expect(res.id).not.toBe(t.account) },
  'AccountRepository.findByName': { crossTenant: 'operator', run: (r, _c, t) => r.findByName(t.name) },
  'AccountRepository.list': { crossTenant: 'operator', run: (r) => r.list() },
  'AccountRepository.insert': { crossTenant: 'operator', run: (r) => r.insert({ name: 'isolation-new' }) },

  'LoginRepository.lookup': {
    // with the target's API token too: on the caller's host, another account's token names nobody (and touches nothing)
    crossTenant: 'signIn', run: (r, c, t) => r.lookup({ emailKey: t.endUserEmail, keyPrefix: 'isolation-key:', limit: 10 }, [], 300, c.subdomain, t.apiTokenHash),
    nothing: (res) => expect([res.candidate, res.apiTokenId]).toEqual([undefined, undefined]),
  },
  'LoginRepository.recordAttempt': { crossTenant: 'loginThrottle', run: (r) => r.recordAttempt(throttle, 300) },
  'LoginRepository.failedNow': { crossTenant: 'loginThrottle', run: (r) => r.failedNow(['1'], 300) },
  'LoginRepository.takeBack': { crossTenant: 'loginThrottle', run: (r) => r.takeBack(['1']) },
  'LoginRepository.clear': { crossTenant: 'loginThrottle', run: (r) => r.clear('isolation-key', ['1']) },
  'LoginRepository.activeEndUser': { run: (r, c, t) => r.activeEndUser(c.account, t.endUserEmail), nothing: undefined },

  'UserRepository.find': { run: (r, c, t) => r.find(scope(c), t.endUserId), nothing: null },
  'UserRepository.findSignedIn': { run: (r, c, t) => r.findSignedIn(scope(c), t.endUserId), nothing: null },
  'UserRepository.findMany': { run: (r, c, t) => r.findMany(scope(c), [t.endUserId, t.adminId]), nothing: [] },
  'UserRepository.listKeyset': { run: (r, c) => r.listKeyset(scope(c), undefined, { size: 100 }), nothing: (res, t) => noneOf(t, res.items) },
  'UserRepository.listOffset': { run: (r, c) => r.listOffset(scope(c), undefined, page), nothing: (res, t) => noneOf(t, res) },
  'UserRepository.count': { run: (r, c) => r.count(scope(c), 'end_user'), nothing: 1 },
  'UserRepository.anyUser': { crossTenant: 'operator', run: (r) => r.anyUser() },
  'UserRepository.withEmailInAnyAccount': { crossTenant: 'operator', run: (r, _c, t) => r.withEmailInAnyAccount(t.endUserEmail) },
  'UserRepository.insert': {
    writesOwn: true, nothing: (res, t) => notOf(t)(res),
    run: (r, c) => r.insert(scope(c), { name: 'New', email: 'new@example.com', role: 'agent', passwordHash: '!no-password' }),
  },
  'UserRepository.lock': { run: (r, c, t) => r.lock(scope(c), t.endUserId), nothing: null },
  'UserRepository.lockActiveAdmins': { run: (r, c) => r.lockActiveAdmins(scope(c)), nothing: (res, t) => expect(res).not.toContain(t.adminId) },
  'UserRepository.emailTaken': { run: (r, c, t) => r.emailTaken(scope(c), t.endUserEmail, 0n), nothing: false },
  'UserRepository.update': { run: (r, c, t) => r.update(scope(c), t.endUserId, { name: 'Changed', active: false }), nothing: null },
  'UserRepository.setPasswordHash': { run: (r, c, t) => r.setPasswordHash(scope(c), t.endUserId, 'changed'), nothing: null },

  'GroupRepository.find': { run: (r, c, t) => r.find(scope(c), t.groupId, true), nothing: null },
  'GroupRepository.list': { run: (r, c) => r.list(scope(c), page), nothing: (res, t) => noneOf(t, res) },
  'GroupRepository.count': { run: (r, c) => r.count(scope(c)), nothing: 1 },
  'GroupRepository.insert': { writesOwn: true, run: (r, c) => r.insert(scope(c), { name: 'New', description: '' }), nothing: (res, t) => notOf(t)(res) },
  'GroupRepository.update': { run: (r, c, t) => r.update(scope(c), t.groupId, { name: 'Changed' }), nothing: null },
  'GroupRepository.delete': { run: (r, c, t) => r.delete(scope(c), t.groupId), nothing: null },

  'GroupMembershipRepository.find': { run: (r, c, t) => r.find(scope(c), t.membershipId), nothing: null },
  'GroupMembershipRepository.list': { run: (r, c) => r.list(scope(c), {}, page), nothing: (res, t) => noneOf(t, res) },
  'GroupMembershipRepository.count': { run: (r, c, t) => r.count(scope(c), { groupId: t.groupId }), nothing: 0 },
  // the target's end user and group: a pair that is no member yet (the repository leaves roles to the service)
  'GroupMembershipRepository.insert': { run: (r, c, t) => r.insert(scope(c), { userId: t.endUserId, groupId: t.groupId }), nothing: null },
  'GroupMembershipRepository.delete': { run: (r, c, t) => r.delete(scope(c), t.membershipId), nothing: null },
  'GroupMembershipRepository.deleteOf': { run: (r, c, t) => r.deleteOf(scope(c), { groupId: t.groupId }), nothing: [] },

  'ApiTokenRepository.find': { run: (r, c, t) => r.find(scope(c), t.apiTokenId), nothing: null },
  'ApiTokenRepository.listKeyset': { run: (r, c) => r.listKeyset(scope(c), { size: 100 }), nothing: (res, t) => noneOf(t, res.items) },
  'ApiTokenRepository.listOffset': { run: (r, c) => r.listOffset(scope(c), page), nothing: (res, t) => noneOf(t, res) },
  'ApiTokenRepository.count': { run: (r, c) => r.count(scope(c)), nothing: 1 },
  'ApiTokenRepository.insert': {
    writesOwn: true, run: (r, c) => r.insert({ ...scope(c), createdBy: c.adminId }, { description: 'isolation-new', token: 'isolation-new-api-token-0123', tokenHash: 'isolation-new-api-token' }, 10),
    nothing: (res, t) => notOf(t)(res),
  },
  'ApiTokenRepository.delete': { run: (r, c, t) => r.delete(scope(c), t.apiTokenId), nothing: null },
  'WebhookRepository.find': { run: (r, c, t) => r.find(scope(c), t.webhookId), nothing: null },
  'WebhookRepository.listKeyset': { run: (r, c) => r.listKeyset(scope(c), {}, { size: 100 }), nothing: (res, t) => noneOf(t, res.items) },
  'WebhookRepository.count': { run: (r, c) => r.count(scope(c)), nothing: 1 },
  'WebhookRepository.insert': { writesOwn: true, run: (r, c) => r.insert({ ...scope(c), createdBy: null }, newWebhook('isolation-new'), 50), nothing: (res, t) => notOf(t)(res) },
  'WebhookRepository.update': { run: (r, c, t) => r.update({ ...scope(c), updatedBy: null }, t.webhookId, { name: 'Changed' }), nothing: null },
  'WebhookRepository.delete': { run: (r, c, t) => r.delete(scope(c), t.webhookId), nothing: null },
  'WebhookRepository.readSecret': { run: (r, c, t) => r.readSecret(scope(c), t.webhookId), nothing: null },
  'WebhookRepository.replaceSecret': { run: (r, c, t) => r.replaceSecret({ ...scope(c), updatedBy: null }, t.webhookId, 'sealed-changed'), nothing: null },

  'WebhookInvocationRepository.fanOut': { run: (r, c, t) => r.fanOut(scope(c), t.eventId, { kind: 'webhook.deliver', maxAttempts: 1 }), nothing: 0 },
  'WebhookInvocationRepository.insertTest': { run: (r, c, t) => r.insertTest(scope(c), t.webhookId, randomUUID(), 'zen:event-type:webhook.test'), nothing: null },
  'WebhookInvocationRepository.find': { run: (r, c, t) => r.find(scope(c), t.webhookId, t.invocationId), nothing: null },
  'WebhookInvocationRepository.target': { run: (r, c, t) => r.target(scope(c), t.invocationId), nothing: null },
  'WebhookInvocationRepository.recordAttempt': {
    run: (r, c, t) => r.recordAttempt(scope(c), t.invocationId, { startedAt: new Date(), durationMs: 1, statusCode: 200, error: null, response: '' }, 'success', null),
    nothing: false,
  },
  'WebhookInvocationRepository.fail': { run: (r, c, t) => r.fail(scope(c), t.invocationId, 'isolation'), nothing: false },
  'WebhookInvocationRepository.lockBreaker': { run: (r, c, t) => r.lockBreaker(scope(c), t.webhookId), nothing: null },
  'WebhookInvocationRepository.takeProbe': { run: (r, c, t) => r.takeProbe(scope(c), t.webhookId, new Date()), nothing: false },
  'WebhookInvocationRepository.saveBreaker': {
    run: (r, c, t) => r.saveBreaker(scope(c), t.webhookId, { consecutiveFailures: 10, failingSince: new Date(), openUntil: new Date() }, 'isolation'),
    nothing: false,
  },
  'WebhookInvocationRepository.listKeyset': { run: (r, c, t) => r.listKeyset(scope(c), t.webhookId, {}, { size: 100 }), nothing: (res: any) => expect(res.items).toEqual([]) },
  'WebhookInvocationRepository.count': { run: (r, c, t) => r.count(scope(c), t.webhookId), nothing: 0 },
  'WebhookInvocationRepository.attempts': { run: (r, c, t) => r.attempts(scope(c), t.invocationId), nothing: [] },

  'PhoneNumberRepository.find': { run: (r, c, t) => r.find(scope(c), t.phoneId, true), nothing: null },
  'PhoneNumberRepository.list': { run: (r, c) => r.list(scope(c), page), nothing: (res, t) => noneOf(t, res) },
  'PhoneNumberRepository.count': { run: (r, c) => r.count(scope(c)), nothing: 1 },
  'PhoneNumberRepository.insertOrRevive': {
    writesOwn: true, nothing: (res, t) => notOf(t)(res.record),
    run: (r, c) => r.insertOrRevive(scope(c), { number: '+14155550102', nickname: null, callbackEnabled: false, voiceEnabled: true, smsEnabled: false, mmsEnabled: false }),
  },
  'PhoneNumberRepository.update': { run: (r, c, t) => r.update(scope(c), t.phoneId, { nickname: 'Changed' }), nothing: null },
  'PhoneNumberRepository.softDelete': { run: (r, c, t) => r.softDelete(scope(c), t.phoneId), nothing: null },

  'CallbackRequestRepository.create': {
    nothing: (res) => expect(res.new_id).toBeNull(),
    run: (r, c, t) => r.create(
      scope(c),
      { phoneNumberId: t.phoneId, requesterPhoneNumber: '+14155550198', groupIds: [t.groupId], routedIfOmnichannel: [t.groupId], routedOtherwise: [t.groupId], createdById: c.adminId },
      window,
    ),
  },
  'CallbackRequestRepository.lookups': {
    run: (r, c, t) => r.lookups(scope(c), t.phoneId, [t.groupId]),
    nothing: (res) => expect({ phone: res.phone_found, groups: res.found_group_ids }).toEqual({ phone: false, groups: [] }),
  },
  'CallbackRequestRepository.list': {
    run: async (r, c, t) => {
      const { views, factors, hasNextPage, count } = await r.list(scope(c), { phoneNumberId: t.phoneId, size: 10 });
      return { views, factors, hasNextPage, totalCount: await count() };
    },
    nothing: { views: [], factors: null, hasNextPage: false, totalCount: 0 },
  },
  'CallbackRequestRepository.openOfPhoneNumber': { run: (r, c, t) => r.openOfPhoneNumber(scope(c), t.phoneId), nothing: [] },
  'CallbackRequestRepository.find': { run: (r, c, t) => r.find(scope(c), t.callbackId), nothing: { views: [], factors: null } },

  'CallbackLifecycleRepository.lockAccount': { run: (r, c) => r.lockAccount(scope(c)), nothing: (res, t) => expect(res).not.toBe(t.account) },
  // the target's settings are not the defaults (tenant-fixtures.ts)
  'CallbackLifecycleRepository.settings': { run: (r, c) => r.settings(scope(c)), nothing: { offerTimeout: 30, retryDelay: 120, maxAttempts: 3, wrapUpTime: 0 } },
  'CallbackLifecycleRepository.find': { run: (r, c, t) => r.find(scope(c), t.callbackId, true), nothing: null },
  'CallbackLifecycleRepository.move': {
    run: (r, c, t) => r.move(scope(c), t.callbackId, ['queued'], 'cancelled', { historyAgentId: null, reason: null }), nothing: null,
  },
  'CallbackLifecycleRepository.routable': { run: (r, c) => r.routable(scope(c), 100), nothing: (res, t) => expect(res.map((q: any) => q.id)).not.toContain(t.callbackId) },
  'CallbackLifecycleRepository.onlineAgents': { run: (r, c) => r.onlineAgents(scope(c)), nothing: [] },
  'CallbackLifecycleRepository.mayRoute': { run: (r, c) => r.mayRoute(scope(c)), nothing: false },
  'CallbackLifecycleRepository.availability': { run: (r, c, t) => r.availability(scope(c), t.adminId, true), nothing: null },
  'CallbackLifecycleRepository.availabilities': { run: (r, c, t) => r.availabilities(scope(c), [t.adminId]), nothing: [] },
  'CallbackLifecycleRepository.ensureAvailability': { run: (r, c, t) => r.ensureAvailability(scope(c), t.adminId), nothing: null },
  'CallbackLifecycleRepository.changeAgent': { run: (r, c, t) => r.changeAgent(scope(c), t.adminId, { sets: "agent_state = 'away'" }), nothing: null },
  'CallbackLifecycleRepository.agentContact': { run: (r, c, t) => r.agentContact(scope(c), t.adminId), nothing: null },
  'CallbackLifecycleRepository.isAgent': { run: (r, c, t) => r.isAgent(scope(c), t.adminId), nothing: false },
  'CallbackLifecycleRepository.routableAccounts': { crossTenant: 'jobEngine', run: (r) => r.routableAccounts() },

  'VoiceStatsRepository.queueActivity': { run: (r, c) => r.queueActivity(scope(c)), nothing: (res) => expect({ online: res.agentsOnline, waiting: res.callbacksWaiting }).toEqual({ online: 0, waiting: 1 }) },
  'VoiceStatsRepository.agentsActivity': { run: (r, c) => r.agentsActivity(scope(c)), nothing: (res, t) => expect(res.map((a: any) => a.agentId)).not.toContain(t.adminId) },

  'JobRepository.enqueue': { writesOwn: true, run: (r, c) => r.enqueue(scope(c), { kind: 'isolation' }), nothing: true },
  'JobRepository.enqueueSystem': { crossTenant: 'jobEngine', run: (r) => r.enqueueSystem({ kind: 'isolation-system' }) },
  'JobRepository.claim': { crossTenant: 'jobEngine', run: (r) => r.claim('isolation-worker', ['isolation-none'], 10, 60) },
  'JobRepository.finish': { crossTenant: 'jobEngine', run: (r) => r.finish('isolation-worker', { id: 0n, attempt: 1 }) },
  'JobRepository.fail': { crossTenant: 'jobEngine', run: (r) => r.fail('isolation-worker', { id: 0n, attempt: 1 }, 'isolation', 1, false) },
  'JobRepository.release': { crossTenant: 'jobEngine', run: (r) => r.release('isolation-worker', [{ id: 0n, attempt: 1 }]) },
  'JobRepository.renewLease': { crossTenant: 'jobEngine', run: (r) => r.renewLease('isolation-worker', { id: 0n, attempt: 1 }, 60) },
  'JobRepository.nextDueInSeconds': { crossTenant: 'jobEngine', run: (r) => r.nextDueInSeconds(['isolation-none']) },
  'JobRepository.stats': { crossTenant: 'jobEngine', run: (r) => r.stats() },
  'AuditLogRepository.find': { run: (r, c, t) => r.find(scope(c), t.auditId), nothing: null },
  'AuditLogRepository.listKeyset': { run: (r, c, t) => r.listKeyset(scope(c), { actorId: t.adminId }, 'desc', { size: 100, backward: false }), nothing: (res) => expect(res.items).toEqual([]) },
  'AuditLogRepository.count': { run: (r, c, t) => r.count(scope(c), { actorId: t.adminId }), nothing: 0 },
  'EventLogRepository.find': { run: (r, c, t) => r.find(scope(c), t.eventId), nothing: null },
  'EventLogRepository.findPublished': { crossTenant: 'eventFeed', run: (r, _c, t) => r.findPublished(t.eventId) },
  // the listener name both fixtures hold a row under: only the caller's is renewed or ended
  'LiveListenerRepository.hold': { writesOwn: true, run: (r, c) => r.hold(scope(c), 'isolation-listener'), nothing: undefined },
  'LiveListenerRepository.release': { writesOwn: true, run: (r, c) => r.release(scope(c), 'isolation-listener'), nothing: undefined },

  // The purge spans accounts by design (an expired row is removed whoever's it is); the
  // fixtures are minutes old, so with an hour's retention nothing of the target is over.
  'RetentionRepository.now': { crossTenant: 'retention', run: (r) => r.now() },
  'RetentionRepository.purgeBatch': {
    crossTenant: 'retention',
    run: async (r) => {
      for (const table of RETENTION_TABLES) await r.purgeBatch(table, anHourAgo(), RANGE_START, 1000);
    },
  },
  'RetentionRepository.countOver': {
    crossTenant: 'retention',
    run: async (r) => {
      for (const table of RETENTION_TABLES) expect(await r.countOver(table, anHourAgo())).toBe(0);
    },
  },
  'RetentionRepository.recordRun': {
    crossTenant: 'retention',
    run: (r) => r.recordRun({ startedAt: new Date(), finishedAt: new Date(), durationMs: 1, removed: { oauth_tokens: 0 }, stopped: false }),
  },
  'RetentionRepository.lastRun': { crossTenant: 'retention', run: (r) => r.lastRun() },
  recordAudit: {
    writesOwn: true, nothing: undefined,
    run: (_r, c, t, sql) => recordAudit(sql, systemActor(c.account), { action: 'update', sourceType: 'group', sourceId: t.groupId, sourceLabel: 'x', description: 'isolation' }),
  },

  'OAuthClientRepository.list': { run: (r, c) => r.list(scope(c)), nothing: (res, t) => noneOf(t, res) },
  'OAuthClientRepository.find': { run: (r, c, t) => r.find(scope(c), t.clientId), nothing: null },
  'OAuthClientRepository.findMany': { run: (r, c, t) => r.findMany(scope(c), [t.clientId]), nothing: [] },
  'OAuthClientRepository.insert': {
    writesOwn: true, nothing: (res, t) => notOf(t)(res),
    run: (r, c) => r.insert(
      { accountId: c.account, agentId: c.adminId },
      { name: 'New', company: null, clientType: 'public', scopes: 'read', redirectUris: ['https://example.com/cb'], identifier: 'isolation-new-client' },
      'unused',
    ),
  },
  'OAuthClientRepository.update': { run: (r, c, t) => r.update(scope(c), t.clientId, { name: 'Changed' }), nothing: null },
  'OAuthClientRepository.touchForNewSecret': { run: (r, c, t) => r.touchForNewSecret(scope(c), t.clientId, 'unused'), nothing: null },
  'OAuthClientRepository.lockForDelete': { run: (r, c, t) => r.lockForDelete(scope(c), t.clientId), nothing: null },
  'OAuthClientRepository.delete': { run: (r, c, t) => r.delete(scope(c), t.clientId), nothing: undefined },
  // on an account's host, only that account's clients are found (on the bare host, any account's: the reason)
  'OAuthClientRepository.findByIdentifier': { crossTenant: 'clientIdentifier', run: (r, c, t) => r.findByIdentifier(t.clientIdentifier, c.subdomain), nothing: null },

  'OAuthClientSecretRepository.insertFirst': { run: (r, c, t) => r.insertFirst({ id: t.clientId, accountId: c.account }, secret), nothing: undefined },
  'OAuthClientSecretRepository.rotate': { run: (r, c, t) => r.rotate(scope(c), t.clientId, secret, 0), nothing: false },
  'OAuthClientSecretRepository.endGracePeriod': { run: (r, c, t) => r.endGracePeriod(scope(c), t.clientId), nothing: null },
  'OAuthClientSecretRepository.liveOfClients': { run: (r, c, t) => r.liveOfClients(scope(c), [t.clientId]), nothing: [] },
  'OAuthClientSecretRepository.touch': { run: (r, c, t) => r.touch(scope(c), t.secretId), nothing: undefined },

  'OAuthGrantRepository.insert': {
    // nothing inserted, and none of the target's live grants counted
    run: (r, c, t) => r.insert({ clientId: t.clientId, accountId: c.account, userId: t.endUserId, scopes: ['read'] }, 100), nothing: { id: null, live: 0 },
  },
  'OAuthGrantRepository.findRemembered': {
    // the target's grant is not found, and none of its live grants counted
    run: (r, c, t) => r.findRemembered({ clientId: t.clientId, accountId: c.account, userId: t.endUserId, scopes: ['read'] }, 100), nothing: { id: null, live: 0 },
  },
  'OAuthGrantRepository.revokeAllOfUser': { run: (r, c, t) => r.revokeAllOfUser(scope(c), t.endUserId), nothing: undefined },
  'OAuthGrantRepository.revoke': { run: (r, c, t) => r.revoke(scope(c), t.grantId), nothing: undefined },
  // a person's own authorized apps: the caller's account with the target's user, grant and token
  'OAuthGrantRepository.revokeOwn': { run: (r, c, t) => r.revokeOwn({ accountId: c.account, userId: t.endUserId }, t.grantId), nothing: false },
  'AuthorizedAppRepository.list': { run: (r, c, t) => r.list({ accountId: c.account, userId: t.endUserId }, 100), nothing: [] },
  'AuthorizedAppRepository.revokeToken': { run: (r, c, t) => r.revokeToken({ accountId: c.account, userId: t.endUserId }, t.tokenId, audit(c)), nothing: false },

  'OAuthAuthorizationCodeRepository.insert': {
    nothing: null,
    run: (r, c, t) => r.insert({
      accountId: c.account, grantId: t.grantId, clientId: t.clientId, codeHash: 'isolation-new-code', redirectUri: 'https://example.com/cb', codeChallenge: null, codeChallengeMethod: null,
    }),
  },
  'SignInSessionRepository.start': {
    // a session of another account's user is never started
    run: (r, c, t) => r.start(scope(c), { userId: t.endUserId, tokenHash: 'isolation-new-session', seconds: 60 }), nothing: null,
  },
  'SignInSessionRepository.findLive': { run: (r, c, t) => r.findLive(scope(c), t.sessionHash), nothing: null },
  'SignInSessionRepository.end': { run: (r, c, t) => r.end(scope(c), t.sessionHash), nothing: false },

  'OAuthAuthorizationCodeRepository.consume': { run: (r, c, t) => r.consume(scope(c), t.codeHash, t.clientId), nothing: {} },

  'OAuthTokenRepository.insert': {
    nothing: null,
    run: (r, c, t) => r.insert({ accountId: c.account, userId: c.adminId }, { clientId: t.clientId, tokenHash: 'isolation-new-token', token: 'isolation-new-token-0123', scopes: ['read'], expiresAt: null, grantId: t.grantId }, audit(c)),
  },
  'OAuthTokenRepository.find': { run: (r, c, t) => r.find(scope(c), t.tokenId), nothing: null },
  'OAuthTokenRepository.listKeyset': { run: (r, c, t) => r.listKeyset(scope(c), t.clientId, { size: 10 }), nothing: { items: [], hasNextPage: false, hasPreviousPage: false } },
  'OAuthTokenRepository.listOffset': { run: (r, c, t) => r.listOffset(scope(c), t.clientId, page), nothing: [] },
  'OAuthTokenRepository.count': { run: (r, c, t) => r.count(scope(c), t.clientId), nothing: 0 },
  'OAuthTokenRepository.firstByClients': { run: (r, c, t) => r.firstByClients(scope(c), [t.clientId], 10), nothing: [] },
  'OAuthTokenRepository.revoke': { run: (r, c, t) => r.revoke(scope(c), t.tokenId, audit(c)), nothing: false },
  'OAuthTokenRepository.revokeAllOfClient': { run: (r, c, t) => r.revokeAllOfClient(scope(c), t.clientId), nothing: 0 },
  'OAuthTokenRepository.revokeAllOfUser': { run: (r, c, t) => r.revokeAllOfUser(scope(c), t.endUserId), nothing: 0 },
  'OAuthTokenRepository.revokeGrantTokensOfUser': { run: (r, c, t) => r.revokeGrantTokensOfUser(scope(c), t.endUserId), nothing: [] },

  'OAuthGrantTokenRepository.issueForGrant': { run: (r, c, t) => r.issueForGrant(scope(c), t.grantId, 'authorization_code', newToken(), grantAudit), nothing: null },
  'OAuthGrantTokenRepository.issueForClient': {
    // nothing issued, and the target client's live-token counters neither read nor pruned
    run: (r, c, t) => r.issueForClient(scope(c), t.clientId, ['read'], newToken(), grantAudit, 100), nothing: { record: null, live: 0, freesAt: null },
  },
  'OAuthGrantTokenRepository.rotateRefresh': { run: (r, c, t) => r.rotateRefresh(scope(c), t.refreshHash, t.clientId, undefined, newToken(), grantAudit), nothing: null },
  'OAuthGrantTokenRepository.findByEitherHash': { run: (r, c, t) => r.findByEitherHash(scope(c), t.refreshHash), nothing: null },
  'OAuthGrantTokenRepository.revokeById': { run: (r, c, t) => r.revokeById(scope(c), t.grantTokenId, audit(c)), nothing: false },
  'OAuthGrantTokenRepository.revokeGrant': { run: (r, c, t) => r.revokeGrant(scope(c), t.grantId), nothing: [] },

  'PresentedTokenRepository.findPresented': { crossTenant: 'presentedToken', run: (r, c, t) => r.findPresented(t.tokenHash, c.subdomain), nothing: null },
};

/** Exported functions of repository modules that run no SQL (helpers of the SQL text and of the audit actor). */
export const NO_SQL_FUNCTIONS = ['actorOf', 'describedFor', 'systemActor', 'auditCte', 'originParams', 'truncateSecret', 'recordedEventsCtes', 'eventRows', 'eventCtes'];
