import { randomUUID } from 'node:crypto';
import { TenantSql } from '../../src/db/tenant-sql';
import type { Db } from '../../src/db/create-db';
import { recordAudit, systemActor } from '../../src/domain/audit/audit-log.repository';
import { CallbackRequestRepository } from '../../src/domain/callback-requests/callback-request.repository';
import { AccountRepository } from '../../src/domain/directory/account.repository';
import { GroupRepository } from '../../src/domain/directory/group.repository';
import { GroupMembershipRepository } from '../../src/domain/voice/group-membership.repository';
import { PhoneNumberRepository } from '../../src/domain/directory/phone-number.repository';
import { UNUSABLE_PASSWORD_HASH, UserRepository } from '../../src/domain/directory/user.repository';
import { OAuthClientSecretRepository } from '../../src/domain/oauth-clients/oauth-client-secret.repository';
import { OAuthClientRepository } from '../../src/domain/oauth-clients/oauth-client.repository';
import { OAuthAuthorizationCodeRepository } from '../../src/domain/oauth-server/oauth-authorization-code.repository';
import { OAuthGrantRepository } from '../../src/domain/oauth-server/oauth-grant.repository';
import { OAuthGrantTokenRepository } from '../../src/domain/oauth-tokens/oauth-grant-token.repository';
import { OAuthTokenRepository } from '../../src/domain/oauth-tokens/oauth-token.repository';
import { WebhookInvocationRepository } from '../../src/domain/webhooks/webhook-invocation.repository';
import { WebhookRepository, type NewWebhook } from '../../src/domain/webhooks/webhook.repository';
import { ApiTokenRepository } from '../../src/domain/api-tokens/api-token.repository';
import { SignInSessionRepository } from '../../src/domain/auth/sign-in-session.repository';

// One account with one row of every tenant table (test/tenant-isolation.test.ts
// seeds two, and calls every repository method of one on the other's ids).
// `extra` adds a second group, phone number and end user, so that the counts of
// the two accounts differ.

export interface TenantFixture {
  account: bigint;
  name: string;
  subdomain: string;
  adminId: bigint;
  endUserId: bigint;
  endUserEmail: string;
  clientId: bigint;
  clientIdentifier: string;
  secretId: bigint;
  /** an API token of the end user */
  tokenId: bigint;
  tokenHash: string;
  grantId: bigint;
  codeHash: string;
  /** the token the grant issued, with a refresh token */
  grantTokenId: bigint;
  accessHash: string;
  refreshHash: string;
  phoneId: bigint;
  groupId: bigint;
  /** the admin's membership of the group */
  membershipId: bigint;
  callbackId: bigint;
  auditId: bigint;
  /** an event of the account (its API token's oauth_token.created) */
  eventId: string;
  webhookId: bigint;
  /** an invocation of the webhook (the event sent to it), with one attempt */
  invocationId: bigint;
  /** an API token of the account (made by its admin), and its hash */
  apiTokenId: bigint;
  apiTokenHash: string;
  /** the keyed hash of a live sign-in session of the end user */
  sessionHash: string;
}

/** The tables whose rows belong to an account (each has account_id; accounts is the account itself). */
const TENANT_TABLES = [
  'accounts', 'users', 'oauth_clients', 'oauth_client_secrets', 'oauth_grants', 'oauth_authorization_codes', 'oauth_tokens',
  'oauth_client_token_counts', 'voice_phone_numbers', 'groups', 'group_memberships', 'callback_requests', 'callback_request_history', 'agent_availabilities',
  'audit_logs', 'jobs', 'events', 'webhooks', 'webhook_invocations', 'webhook_invocation_attempts',
  'api_tokens',
  'oauth_sessions',
  'live_event_listeners',
] as const;
/** How a table's rows are ordered in a snapshot: by id, but the counters and availabilities, which have none. */
const ORDER: Partial<Record<(typeof TENANT_TABLES)[number], string>> = {
  oauth_client_token_counts: 'client_id, ends_at, shard', agent_availabilities: 'user_id', live_event_listeners: 'listener',
};

const json = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));

/** Every row of the tenant tables (of one account when `accountId` is given), as text to compare. */
export async function snapshot(sql: Db['sql'], accountId?: bigint): Promise<string> {
  const parts: string[] = [];
  for (const table of TENANT_TABLES) {
    const column = table === 'accounts' ? 'id' : 'account_id';
    const where = accountId === undefined ? '' : ` WHERE ${column} = ${String(accountId)}`;
    parts.push(json(await sql(`SELECT * FROM ${table}${where} ORDER BY ${ORDER[table] ?? 'id'}`)));
  }
  return parts.join('\n');
}

/** A webhook's fields (its secret sealed as anything: the repository stores what it is given). */
export function newWebhook(label: string): NewWebhook {
  return {
    name: `Webhook ${label}`, description: null, endpoint: `https://hooks.example.com/${label}`, httpMethod: 'POST', requestFormat: 'json', status: 'active',
    subscriptions: ['zen:event-type:oauth_token.revoked', 'zen:event-type:oauth_token.created'], sealedSecret: `sealed-${label}`,
  };
}

export async function seedTenant(db: Pick<Db, 'sql'>, label: string, extra = false): Promise<TenantFixture> {
  const sql = new TenantSql(db.sql);
  const account = (await new AccountRepository(sql).insert({ name: `isolation-${label}`, subdomain: `isolation-${label}` }))!;
  const scope = { accountId: account.id };
  const users = new UserRepository(sql);
  const admin = (await users.insert(scope, { name: `Admin ${label}`, email: `admin-${label}@example.com`, role: 'admin', passwordHash: UNUSABLE_PASSWORD_HASH }))!;
  const endUserEmail = `end-${label}@example.com`;
  const endUser = (await users.insert(scope, { name: `End ${label}`, email: endUserEmail, role: 'end_user', passwordHash: UNUSABLE_PASSWORD_HASH }))!;
  const client = await new OAuthClientRepository(sql).insert(
    { ...scope, agentId: admin.id },
    { name: `Client ${label}`, company: null, clientType: 'confidential', scopes: 'read write', redirectUris: ['https://example.com/cb'], identifier: `isolation-client-${label}`, description: null, logoUrl: null },
    'unused',
  );
  await new OAuthClientSecretRepository(sql).insertFirst(client, { secret: `secret-${label}-0123456789`, secretHash: `secret-hash-${label}` });
  const [secret] = await db.sql<{ id: string }>('SELECT id FROM oauth_client_secrets WHERE client_id = $1', [String(client.id)]);
  const seed = { actor: { accountId: account.id, actorId: admin.id, actorName: admin.name, origin: { via: 'api' as const } }, description: 'seed' };
  const tokenHash = `token-hash-${label}`;
  const token = (await new OAuthTokenRepository(sql).insert({ ...scope, userId: endUser.id }, { clientId: client.id, tokenHash, token: `token-${label}-0123456789`, scopes: ['read'], expiresAt: null, grantId: null }, seed))!;
  const grantId = (await new OAuthGrantRepository(sql).insert({ clientId: client.id, accountId: account.id, userId: endUser.id, scopes: ['read'] }, 100)).id!;
  const codeHash = `code-hash-${label}`;
  await new OAuthAuthorizationCodeRepository(sql).insert({
    accountId: account.id, grantId, clientId: client.id, codeHash, redirectUri: 'https://example.com/cb', codeChallenge: null, codeChallengeMethod: null,
  });
  const accessHash = `access-hash-${label}`;
  const refreshHash = `refresh-hash-${label}`;
  const grantTokens = new OAuthGrantTokenRepository(sql);
  const grantToken = (await grantTokens.issueForGrant(
    scope, grantId, 'authorization_code',
    { token: `access-${label}-0123456789`, tokenHash: accessHash, expiresIn: 3600, refresh: { token: `refresh-${label}-0123456789`, tokenHash: refreshHash, expiresIn: 2_592_000 } },
    { origin: { via: 'oauth' }, description: 'seed' },
  ))!;
  // a client_credentials token: the client's live-token counter has a row
  await grantTokens.issueForClient(scope, client.id, ['read'], { token: `cc-${label}-0123456789`, tokenHash: `cc-hash-${label}`, expiresIn: 3600 }, { origin: { via: 'oauth' }, description: 'seed' }, 100);
  const phone = (await new PhoneNumberRepository(sql).insertOrRevive(scope, {
    number: '+14155550100', nickname: null, callbackEnabled: true, voiceEnabled: true, smsEnabled: false, mmsEnabled: false,
  }))!.record;
  const group = await new GroupRepository(sql).insert(scope, { name: `Group ${label}`, description: '' });
  const membership = (await new GroupMembershipRepository(sql).insert(scope, { userId: admin.id, groupId: group.id }))!;
  const created = (await new CallbackRequestRepository(sql).create(
    scope,
    { phoneNumberId: phone.id, requesterPhoneNumber: '+14155550199', groupIds: [group.id], routedIfOmnichannel: [group.id], routedOtherwise: [group.id], createdById: admin.id },
    { bucket: `isolation-${label}`, limit: 30, seconds: 600 },
  ))!;
  const webhooks = new WebhookRepository(sql);
  const webhook = (await webhooks.insert({ ...scope, createdBy: admin.id }, newWebhook(label), 50))!;
  // a process watching the account live, under the listener name the isolation cases use
  await sql.query(scope, "INSERT INTO live_event_listeners (account_id, listener, expires_at) VALUES ($1, 'isolation-listener', now() + interval '1 hour')");
  await recordAudit(sql, systemActor(account.id), { action: 'create', sourceType: 'group', sourceId: group.id, sourceLabel: group.name, description: 'seed' });
  if (extra) {
    await users.insert(scope, { name: `Other ${label}`, email: `other-${label}@example.com`, role: 'end_user', passwordHash: UNUSABLE_PASSWORD_HASH });
    await new GroupRepository(sql).insert(scope, { name: `Other group ${label}`, description: '' });
    await webhooks.insert({ ...scope, createdBy: admin.id }, newWebhook(`other-${label}`), 50);
    await new PhoneNumberRepository(sql).insertOrRevive(scope, {
      number: '+14155550101', nickname: null, callbackEnabled: false, voiceEnabled: true, smsEnabled: false, mmsEnabled: false,
    });
    // the lifecycle's rows: settings of its own, an online agent, a step of history, a completed callback (the wait estimate's)
    await sql.query(scope, 'UPDATE accounts SET callback_offer_timeout = 45, wrap_up_time = 10 WHERE id = $1');
    await sql.query(scope, "INSERT INTO agent_availabilities (account_id, user_id, agent_state, via, idle_since, online_since) VALUES ($1, $2, 'online', 'client', now(), now())", [String(admin.id)]);
    await sql.query(scope, "INSERT INTO callback_request_history (account_id, callback_request_id, status) VALUES ($1, $2, 'queued')", [String(created.new_id)]);
    await sql.query(
      scope,
      `INSERT INTO callback_requests (account_id, phone_number_id, requester_phone_number, requested_group_ids, routed_group_ids, status, dialing_at, completed_at)
       VALUES ($1, $2, '+14155550197', '{}', '{}', 'completed', now() - interval '1 minute', now())`,
      [String(phone.id)],
    );
  }
  const apiTokens = new ApiTokenRepository(sql);
  const apiToken = await apiTokens.insert({ ...scope, createdBy: admin.id }, { description: `API token ${label}`, token: `api-token-${label}-0123456789`, tokenHash: `api-token-hash-${label}` }, 10);
  if (extra) await apiTokens.insert({ ...scope, createdBy: admin.id }, { description: `Other API token ${label}`, token: `api-token-other-${label}-0123`, tokenHash: `api-token-hash-other-${label}` }, 10);
  const [audit] = await db.sql<{ id: string }>('SELECT max(id) AS id FROM audit_logs WHERE account_id = $1', [String(account.id)]);
  const [event] = await db.sql<{ id: string }>('SELECT id FROM events WHERE account_id = $1 AND subject = $2', [String(account.id), `zen:oauth_token:${token.id}`]);
  const invocations = new WebhookInvocationRepository(sql);
  const invocationId = (await invocations.insertTest(scope, webhook.id, randomUUID(), 'zen:event-type:webhook.test'))!;
  // paused, the pause over: a delivery may take the probe
  await invocations.saveBreaker(scope, webhook.id, { consecutiveFailures: 10, failingSince: new Date(), openUntil: new Date(Date.now() - 1000) });
  await invocations.recordAttempt(scope, invocationId, { startedAt: new Date(), durationMs: 5, statusCode: 503, error: null, response: 'seed' }, 'retrying', null);
  const sessionHash = `session-hash-${label}`;
  await new SignInSessionRepository(sql).start(scope, { userId: endUser.id, tokenHash: sessionHash, seconds: 900 });
  return {
    account: account.id, name: account.name, subdomain: account.subdomain, adminId: admin.id, endUserId: endUser.id, endUserEmail,
    clientId: client.id, clientIdentifier: client.identifier, secretId: BigInt(secret.id), tokenId: token.id, tokenHash, grantId, codeHash,
    grantTokenId: grantToken.id, accessHash, refreshHash, phoneId: phone.id, groupId: group.id, membershipId: membership.id, callbackId: BigInt(created.new_id!), auditId: BigInt(audit.id), eventId: event.id,
    webhookId: webhook.id, invocationId, apiTokenId: apiToken.id, apiTokenHash: `api-token-hash-${label}`, sessionHash,
  };
}
