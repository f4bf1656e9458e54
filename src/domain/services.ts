import type { Db } from '../db/create-db';
import { TenantSql } from '../db/tenant-sql';
import type { Config, Limits } from '../config';
import { Authenticator } from './auth/authenticator';
import { LoginAttempts } from './auth/login-attempt';
import { AccountService } from './directory/account.service';
import { GroupService } from './directory/group.service';
import { PhoneNumberService } from './directory/phone-number.service';
import { UserService } from './directory/user.service';
import { UserPasswordService } from './directory/user-password.service';
import { OAuthClientService } from './oauth-clients/oauth-client.service';
import { CallbackRequestService } from './callback-requests/callback-request.service';
import { CallbackLifecycleService } from './voice/callback-lifecycle.service';
import { AgentAvailabilityService } from './voice/agent-availability.service';
import { OAuthTokenService } from './oauth-tokens/oauth-token.service';
import { CursorCodec } from './pagination';
import { OAuthServer } from './oauth-server/oauth-server.service';
import { AuthorizedAppsService } from './oauth-server/authorized-apps.service';
import { AuditLogService } from './audit/audit-log.service';
import { repositories } from './repositories';
import { SigningSecretBox } from './webhooks/signing-secret';
import { WebhookService } from './webhooks/webhook.service';
import { ApiTokenService } from './api-tokens/api-token.service';
import { WebhookDeliveryService } from './webhooks/webhook-delivery.service';
import { WebhookInvocationService } from './webhooks/webhook-invocation.service';
import { GroupMembershipService } from './voice/group-membership.service';
import { RetentionService } from './retention/retention.service';
import { RETENTION_DEFAULTS, type RetentionSettings } from './retention/retention-settings';
import { SignInSessions } from './auth/sign-in-session.service';

interface ServiceOptions {
  /** `read`: the reads a replica may answer (the audit log, the voice dashboards); absent, `sql` */
  db: Pick<Db, 'sql' | 'transaction'> & Partial<Pick<Db, 'read'>>;
  hashKey: Buffer;
  limits: Limits;
  /**
   * WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: whether webhooks may call plain http and private
   * addresses. Absent (the CLI, the OpenAPI emitter), the guard is strict.
   */
  webhookAllowPrivateEndpoints?: boolean;
  /** the retention purge's periods and pace (config.retention); absent, the defaults */
  retention?: RetentionSettings;
}

/**
 * The composition root: every repository and every domain service, built once
 * over one database and one configuration. The server (main.ts → buildApp), the
 * CLI, the first start (bootstrapAdmin), the benchmark and the tests all take
 * their services from here; nothing else builds a service or a repository.
 */
export function createServices(options: ServiceOptions) {
  const { db, hashKey, limits } = options;
  // every repository runs its statements through the one tenant-scoped helper
  const repos = repositories(new TenantSql(db.sql));
  // the repositories whose reads may come from a read replica (docs/scaling.md: never
  // authentication, revocation, rate limits, or a read that decides a write)
  const replicaReads = db.read ? repositories(new TenantSql(db.read)) : repos;
  // one login-attempt protocol for Basic logins and previous-password checks
  const attempts = new LoginAttempts(repos.logins, limits.loginWindowSeconds);
  const oauthClients = new OAuthClientService(db, repos.clients, repos.secrets, repositories, hashKey);
  const box = new SigningSecretBox(hashKey);
  const endpointPolicy = { allowPrivate: options.webhookAllowPrivateEndpoints ?? false };
  const passwords = new UserPasswordService(db, repos.users, repositories, { attempts, hashKey, limits });
  const callbackLifecycle = new CallbackLifecycleService(db, repos.lifecycle, repositories);
  return {
    authenticator: new Authenticator({ logins: repos.logins, attempts, tokens: repos.presentedTokens, hashKey, limits }),
    accounts: new AccountService(db, repos.accounts, repositories),
    users: new UserService(db, repos.users, repositories, passwords),
    groups: new GroupService(db, repos.groups, repositories),
    groupMemberships: new GroupMembershipService(db, repos.groupMemberships, repos.groups, repos.users, repositories),
    phoneNumbers: new PhoneNumberService(db, repos.phoneNumbers, repositories, callbackLifecycle),
    oauthClients,
    oauthServer: new OAuthServer({
      db, hashKey, clients: oauthClients, tokens: repos.grantTokens, codes: repos.codes, grants: repos.grants, repos: repositories,
      limits,
    }),
    callbackRequests: new CallbackRequestService(repos.callbackRequests, limits, callbackLifecycle),
    /** the callback lifecycle: routing, offers, dialing, outcomes, cancel, and the timers' decisions */
    callbackLifecycle,
    /** agents' availability (Zendesk Talk's) */
    agentAvailability: new AgentAvailabilityService(repos.lifecycle, callbackLifecycle),
    /** Zendesk Talk's live stats */
    voiceStats: replicaReads.voiceStats,
    oauthTokens: new OAuthTokenService(repos.tokens, hashKey),
    /** a person's own authorized apps (docs/api.md, "Your authorized apps") */
    authorizedApps: new AuthorizedAppsService(db, repos.authorizedApps, repositories),
    cursors: new CursorCodec(hashKey),
    auditLogs: new AuditLogService(replicaReads.auditLogs),
    webhooks: new WebhookService(db, repos.webhooks, repositories, box, endpointPolicy),
    /** webhook deliveries: the fan-out, the attempts, the breaker (run by the jobs of src/jobs/webhook-deliveries.ts) */
    webhookDeliveries: new WebhookDeliveryService(db, repos, repositories, box, endpointPolicy),
    /** what webhooks sent: invocations and attempts */
    webhookInvocations: new WebhookInvocationService(repos.webhooks, repos.invocations),
    /** the jobs table, for the background engine (src/jobs/engine.ts) */
    jobs: repos.jobs,
    /** the events, for the live feed of subscriptions (src/domain/events/event-feed.ts) */
    eventLog: repos.eventLog,
    liveListeners: repos.liveListeners,
    /** the retention purge (docs/api.md, "Retention"), run by the job retention.purge and `npm run cli -- purge` */
    retention: new RetentionService(repos.retention, options.retention ?? RETENTION_DEFAULTS),
    /** the account's API tokens (Zendesk's api_tokens): Basic `{email}/token:{token}` sign-ins go through the authenticator */
    apiTokens: new ApiTokenService(db, repos.apiTokens, repositories, hashKey),
    /** sign-in sessions of the pages under /oauth (docs/api.md, "Sign-in sessions") */
    signInSessions: new SignInSessions(repos.signInSessions, hashKey),
  };
}

export type Services = ReturnType<typeof createServices>;

/** The services of a process, from its configuration (the server, the worker, the CLI). */
export function servicesFor(db: ServiceOptions['db'], config: Pick<Config, 'hashKey' | 'limits' | 'webhookAllowPrivateEndpoints' | 'retention'>): Services {
  return createServices({ db, hashKey: config.hashKey, limits: config.limits, webhookAllowPrivateEndpoints: config.webhookAllowPrivateEndpoints, retention: config.retention });
}
