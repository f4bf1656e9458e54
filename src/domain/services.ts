import type { Db } from '../db/create-db';
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
  const tokens = new OAuthTokenRepository(db);
  const logins = new LoginRepository(db);
  // one login-attempt protocol for Basic logins and previous-password checks
  const attempts = new LoginAttempts(logins, limits.loginWindowSeconds);
  const oauthClients = new OAuthClientService(db, new OAuthClientRepository(db), new OAuthClientSecretRepository(db), hashKey);
  return {
    db,
    limits,
    authenticator: new Authenticator({ logins, attempts, tokens, hashKey, limits }),
    accounts: new AccountService(db),
    users: new UserService(db, { attempts, hashKey, limits }),
    groups: new GroupService(db),
    phoneNumbers: new PhoneNumberService(db),
    oauthClients,
    oauthServer: new OAuthServer({
      db, hashKey, clients: oauthClients, tokens, codes: new OAuthAuthorizationCodeRepository(db), grants: new OAuthGrantRepository(db),
    }),
    callbackRequests: new CallbackRequestService(new CallbackRequestRepository(db), limits),
    oauthTokens: new OAuthTokenService(tokens, hashKey),
    cursors: new CursorCodec(hashKey),
    auditLogs: new AuditLogService(new AuditLogRepository(db)),
  };
}

export type Services = ReturnType<typeof createServices>;
