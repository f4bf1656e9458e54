import type { Db } from '../../db/create-db';
import { hmacHex, randomUrlSafe } from '../crypto';
import type { OAuthClientService } from '../oauth-clients/oauth-client.service';
import { OAuthTokenRepository, type NewGrantToken } from '../oauth-tokens/oauth-token.repository';
import { OAuthAuthorizationCodeRepository } from './oauth-authorization-code.repository';
import { OAuthGrantRepository } from './oauth-grant.repository';

/** What every action of the authorization server works with. */
export interface OAuthServerDeps {
  db: Pick<Db, 'sql' | 'prisma' | 'transaction'>;
  hashKey: Buffer;
  clients: OAuthClientService;
  tokens: OAuthTokenRepository;
  codes: OAuthAuthorizationCodeRepository;
  grants: OAuthGrantRepository;
}

/** The repositories over one transaction's connection. */
export function inTransaction(deps: OAuthServerDeps, sql: Db['sql']) {
  return {
    tokens: new OAuthTokenRepository({ sql }),
    codes: new OAuthAuthorizationCodeRepository({ sql }),
    grants: new OAuthGrantRepository({ sql }),
  };
}

/** Access token lifetime bounds and default, in seconds (Zendesk's: more than 5 minutes, less than 2 days). */
export const ACCESS_LIFETIME = { min: 300, max: 172_800, fallback: 1_800 };
/** Refresh token lifetime bounds and default (more than 7 days, less than 90 days; 30 days). */
export const REFRESH_LIFETIME = { min: 604_800, max: 7_776_000, fallback: 2_592_000 };

/** Fresh token texts (256 bits each) and their keyed hashes. */
export function newGrantToken(hashKey: Buffer, expiresIn: number, refreshExpiresIn?: number): NewGrantToken {
  const token = randomUrlSafe(32);
  const out: NewGrantToken = { token, tokenHash: hmacHex(hashKey, token), expiresIn };
  if (refreshExpiresIn !== undefined) {
    const refresh = randomUrlSafe(32);
    out.refresh = { token: refresh, tokenHash: hmacHex(hashKey, refresh), expiresIn: refreshExpiresIn };
  }
  return out;
}

/**
 * Revokes a family: the grant first (this waits for any statement issuing one of
 * its tokens), then, in a fresh snapshot, every token carrying it.
 */
export async function revokeFamily(deps: OAuthServerDeps, grantId: bigint): Promise<void> {
  await deps.db.transaction(async (sql) => {
    const tx = inTransaction(deps, sql);
    await tx.grants.revoke(grantId);
    await tx.tokens.revokeGrant(grantId);
  });
}
