import type { Limits } from '../../config';
import { tenantTransaction, type TenantSql } from '../../db/tenant-sql';
import { recordAudit, systemActor, type AuditActor } from '../audit/audit-log.repository';
import type { RequestOrigin } from '../auth/viewer';
import { tokenDetail } from '../events/event-details';
import { hmacHex, randomUrlSafe } from '../crypto';
import type { OAuthClientService } from '../oauth-clients/oauth-client.service';
import type { OAuthGrantTokenRepository } from '../oauth-tokens/oauth-grant-token.repository';
import type { NewGrantToken } from '../oauth-tokens/oauth-token.types';
import type { Repositories, RepositoryFactory, Transactions } from '../repositories';
import type { OAuthAuthorizationCodeRepository } from './oauth-authorization-code.repository';
import type { OAuthGrantRepository } from './oauth-grant.repository';

/** What every action of the authorization server works with (built by the composition root, services.ts). */
export interface OAuthServerDeps {
  db: Transactions;
  hashKey: Buffer;
  clients: OAuthClientService;
  tokens: OAuthGrantTokenRepository;
  codes: OAuthAuthorizationCodeRepository;
  grants: OAuthGrantRepository;
  /** the repositories over a transaction's connection */
  repos: RepositoryFactory;
  /** what one user or client may hold live (config Limits) */
  limits: Pick<Limits, 'oauthUserLiveGrants' | 'oauthClientLiveTokens'>;
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

/** Who revokes a family, and why (the audit records' description). */
export interface FamilyRevocation {
  origin: RequestOrigin;
  /** the user whose grant it is, revoking it at /oauth/revoke; absent: the system (a replay) */
  by?: { userId: bigint; name: string };
  description: string;
}

/**
 * Revokes a family: the grant first (this waits for any statement issuing one of
 * its tokens), then, in a fresh snapshot, every token carrying it; in the same
 * transaction, one audit record and one oauth_token.revoked event per token it
 * revoked (none when all were dead already; a family has one live token at a time).
 */
export async function revokeFamily(deps: OAuthServerDeps, family: { accountId: bigint; grantId: bigint }, why: FamilyRevocation): Promise<void> {
  await tenantTransaction(deps.db, async (sql) => {
    const tx = deps.repos(sql);
    await tx.grants.revoke(family, family.grantId);
    await revokeFamilyTokens(sql, tx, family, why);
  });
}

/**
 * The second half of a family's revocation, in the caller's transaction after
 * the grant's row was marked revoked (revokeFamily, or a person revoking their
 * own grant): every token carrying the grant, with one audit record and one
 * oauth_token.revoked event per token revoked.
 */
export async function revokeFamilyTokens(sql: TenantSql, tx: Repositories, family: { accountId: bigint; grantId: bigint }, why: FamilyRevocation): Promise<void> {
  const revoked = await tx.grantTokens.revokeGrant(family, family.grantId);
  if (revoked.length === 0) return;
  const accountId = revoked[0].accountId;
  const actor: AuditActor = why.by ? { accountId, actorId: why.by.userId, actorName: why.by.name, origin: why.origin } : systemActor(accountId, why.origin);
  await recordAudit(
    sql,
    actor,
    revoked.map((t) => ({
      action: 'destroy' as const, sourceType: 'oauth_token' as const, sourceId: t.id, sourceLabel: `${t.prefix}...`, description: why.description,
      event: { name: 'oauth_token.revoked' as const, subject: `oauth_token:${t.id}`, detail: tokenDetail(t.record) },
    })),
  );
}
