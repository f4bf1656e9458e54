import type { TenantSql } from '../../db/tenant-sql';
import { recordAudit, type AuditActor } from '../audit/audit-log.repository';
import type { AccountScope } from '../authorization';
import type { Repositories } from '../repositories';

// What a new password ends (docs/api.md "Users"), in the transaction that stores
// it: every OAuth grant of the user, so their refresh tokens, the access tokens
// of those families and the tokens minted with them stop at once. Sign-in
// sessions of the authorization pages end by themselves: they carry the
// password_changed_at they began under. API tokens (POST /api/v2/oauth/tokens,
// no grant) stay, as GitHub and Zendesk keep API tokens: they are credentials an
// admin made on purpose, listed and revoked one by one, and an integration
// should not break because a person changed their password.

/** Revokes the user's grants and their tokens, one audit record per token; how many tokens. */
export async function endGrantsOfUser(sql: TenantSql, tx: Repositories, actor: AuditActor, scope: AccountScope, userId: bigint): Promise<number> {
  // grants first: a refresh running meanwhile share-locks its grant, and is waited for (OAuthGrantRepository.revoke)
  await tx.grants.revokeAllOfUser(scope, userId);
  const revoked = await tx.tokens.revokeGrantTokensOfUser(scope, userId);
  if (revoked.length > 0) {
    await recordAudit(
      sql,
      actor,
      revoked.map((t) => ({
        action: 'destroy' as const, sourceType: 'oauth_token' as const, sourceId: t.id, sourceLabel: `${t.prefix}...`,
        description: 'Revoked with its grant: the password of its user changed',
      })),
    );
  }
  return revoked.length;
}
