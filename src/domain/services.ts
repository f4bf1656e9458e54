import type { Db } from '../db/create-db';
import type { Limits } from '../config';
import { Authenticator } from './auth/authenticator';
import { DirectoryService } from './directory/directory.service';
import { OAuthClientService } from './oauth-clients/oauth-client.service';
import { CallbackRequestService } from './callback-requests/callback-request.service';
import { OAuthTokenService } from './oauth-tokens/oauth-token.service';
import { CursorCodec } from './pagination';

export interface ServiceOptions {
  db: Db;
  hashKey: Buffer;
  limits: Limits;
}

/** Every domain service, built once per app over one database. */
export function createServices(options: ServiceOptions) {
  const { db, hashKey, limits } = options;
  return {
    db,
    limits,
    authenticator: new Authenticator({ db, hashKey, limits }),
    directory: new DirectoryService(db.prisma),
    oauthClients: new OAuthClientService(db.prisma, hashKey),
    callbackRequests: new CallbackRequestService(db.prisma, db, limits),
    oauthTokens: new OAuthTokenService(db.prisma, hashKey, db.sql),
    cursors: new CursorCodec(hashKey),
  };
}

export type Services = ReturnType<typeof createServices>;
