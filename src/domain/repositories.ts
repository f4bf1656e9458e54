import type { Db } from '../db/create-db';
import type { TenantSql } from '../db/tenant-sql';
import { AuditLogRepository } from './audit/audit-log.repository';
import { JobRepository } from './jobs/job.repository';
import { EventLogRepository } from './events/event-log.repository';
import { LiveListenerRepository } from './events/live-listener.repository';
import { LoginRepository } from './auth/login.repository';
import { CallbackRequestRepository } from './callback-requests/callback-request.repository';
import { AccountRepository } from './directory/account.repository';
import { GroupRepository } from './directory/group.repository';
import { PhoneNumberRepository } from './directory/phone-number.repository';
import { UserRepository } from './directory/user.repository';
import { OAuthClientSecretRepository } from './oauth-clients/oauth-client-secret.repository';
import { OAuthClientRepository } from './oauth-clients/oauth-client.repository';
import { OAuthAuthorizationCodeRepository } from './oauth-server/oauth-authorization-code.repository';
import { OAuthGrantRepository } from './oauth-server/oauth-grant.repository';
import { AuthorizedAppRepository } from './oauth-server/authorized-app.repository';
import { OAuthGrantTokenRepository } from './oauth-tokens/oauth-grant-token.repository';
import { OAuthTokenRepository } from './oauth-tokens/oauth-token.repository';
import { PresentedTokenRepository } from './oauth-tokens/presented-token.repository';
import { WebhookRepository } from './webhooks/webhook.repository';
import { WebhookInvocationRepository } from './webhooks/webhook-invocation.repository';
import { CallbackLifecycleRepository } from './voice/callback-lifecycle.repository';
import { VoiceStatsRepository } from './voice/voice-stats.repository';
import { GroupMembershipRepository } from './voice/group-membership.repository';
import { RetentionRepository } from './retention/retention.repository';
import { ApiTokenRepository } from './api-tokens/api-token.repository';
import { SignInSessionRepository } from './auth/sign-in-session.repository';

/**
 * Every repository, over one connection: the pool's (built once, by the
 * composition root in services.ts) or one transaction's (inside
 * `tenantTransaction(db, async (sql) => repos(sql)…)`, so that the statements
 * of a change and of its audit record commit or roll back together). The only
 * place that builds a repository.
 */
export function repositories(on: TenantSql) {
  return {
    accounts: new AccountRepository(on),
    users: new UserRepository(on),
    groups: new GroupRepository(on),
    /** which agents each group routes to */
    groupMemberships: new GroupMembershipRepository(on),
    phoneNumbers: new PhoneNumberRepository(on),
    logins: new LoginRepository(on),
    clients: new OAuthClientRepository(on),
    secrets: new OAuthClientSecretRepository(on),
    /** API tokens: what admins list, show, create and revoke */
    tokens: new OAuthTokenRepository(on),
    /** tokens of the grant endpoint (codes, refresh, client credentials) */
    grantTokens: new OAuthGrantTokenRepository(on),
    /** the Bearer lookup */
    presentedTokens: new PresentedTokenRepository(on),
    codes: new OAuthAuthorizationCodeRepository(on),
    grants: new OAuthGrantRepository(on),
    /** a person's own authorized apps: their live grants and tokens of no grant */
    authorizedApps: new AuthorizedAppRepository(on),
    callbackRequests: new CallbackRequestRepository(on),
    /** the callback lifecycle's writes and reads: requests' lifecycle columns, history, agents' availability */
    lifecycle: new CallbackLifecycleRepository(on),
    voiceStats: new VoiceStatsRepository(on),
    auditLogs: new AuditLogRepository(on),
    /** the background engine's outbox: enqueued in the change's transaction */
    jobs: new JobRepository(on),
    webhooks: new WebhookRepository(on),
    /** webhook deliveries: invocations, attempts, the breaker's columns */
    invocations: new WebhookInvocationRepository(on),
    /** events in Zendesk's envelope (written with the audit records) */
    eventLog: new EventLogRepository(on),
    /** the accounts this or another process has live subscribers of (their events' NOTIFY) */
    liveListeners: new LiveListenerRepository(on),
    /** the retention purge: what is over, removed in batches across accounts */
    retention: new RetentionRepository(on),
    /** the account's API tokens (their sign-in lookup is LoginRepository.lookup's) */
    apiTokens: new ApiTokenRepository(on),
    /** sign-in sessions of the pages under /oauth */
    signInSessions: new SignInSessionRepository(on),
  };
}

export type Repositories = ReturnType<typeof repositories>;

/** The repositories over a transaction's connection (`repositories` itself; services receive it from the root). */
export type RepositoryFactory = (sql: TenantSql) => Repositories;

/** What a service needs of the database besides its repositories: transactions. */
export type Transactions = Pick<Db, 'transaction'>;
