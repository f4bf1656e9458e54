import type { Db } from '../db/create-db';
import { TenantSql } from '../db/tenant-sql';
import type { Limits } from '../config';
import { Authenticator } from './auth/authenticator';
import { LoginRepository } from './auth/login.repository';
import { LoginAttempts } from './auth/login-attempt';
import { AccountService } from './directory/account.service';
import { GroupService } from './directory/group.service';
import { PhoneNumberService } from './directory/phone-number.service';
import { UserService } from './directory/user.service';
import { OAuthClientService } from './oauth-clients/oauth-client.service';
import { CallbackRequestService } from './callback-requests/callback-request.service';
import { OAuthTokenService } from './oauth-tokens/oauth-token.service';
import { CursorCodec } from './pagination';
import { OAuthTokenRepository } from './oauth-tokens/oauth-token.repository';
import { OAuthGrantTokenRepository } from './oauth-tokens/oauth-grant-token.repository';
import { PresentedTokenRepository } from './oauth-tokens/presented-token.repository';
import { OAuthClientRepository } from './oauth-clients/oauth-client.repository';
import { CallbackRequestRepository } from './callback-requests/callback-request.repository';
import { OAuthClientSecretRepository } from './oauth-clients/oauth-client-secret.repository';
import { OAuthServer } from './oauth-server/oauth-server.service';
import { OAuthAuthorizationCodeRepository } from './oauth-server/oauth-authorization-code.repository';
import { OAuthGrantRepository } from './oauth-server/oauth-grant.repository';
import { AuditLogRepository } from './audit/audit-log.repository';
import { AuditLogService } from './audit/audit-log.service';

export interface ServiceOptions {
  db: Db;
  hashKey: Buffer;
  limits: Limits;
}

/** Every domain service, built once per app over one database. */
export function createServices(options: ServiceOptions) {
  const { db, hashKey, limits } = options;
  // every repository runs its statements through the one tenant-scoped helper
  const sql = new TenantSql(db.sql);
  const tokens = new OAuthTokenRepository(sql);
  const logins = new LoginRepository(sql);
  // one login-attempt protocol for Basic logins and previous-password checks
  const attempts = new LoginAttempts(logins, limits.loginWindowSeconds);
  const oauthClients = new OAuthClientService(db, new OAuthClientRepository(sql), new OAuthClientSecretRepository(sql), hashKey);
  return {
    db,
    limits,
    authenticator: new Authenticator({ logins, attempts, tokens: new PresentedTokenRepository(sql), hashKey, limits }),
    accounts: new AccountService(db),
    users: new UserService(db, { attempts, hashKey, limits }),
    groups: new GroupService(db),
    phoneNumbers: new PhoneNumberService(db),
    oauthClients,
    oauthServer: new OAuthServer({
      db, hashKey, clients: oauthClients, tokens: new OAuthGrantTokenRepository(sql), codes: new OAuthAuthorizationCodeRepository(sql), grants: new OAuthGrantRepository(sql),
      limits,
    }),
    callbackRequests: new CallbackRequestService(new CallbackRequestRepository(sql), limits),
    oauthTokens: new OAuthTokenService(tokens, hashKey),
    cursors: new CursorCodec(hashKey),
    auditLogs: new AuditLogService(new AuditLogRepository(sql)),
  };
}

export type Services = ReturnType<typeof createServices>;
