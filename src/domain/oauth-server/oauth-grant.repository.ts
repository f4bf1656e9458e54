import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';

// The only module that reads or writes oauth_grants: the families of tokens. A
// grant is created when a user consents (with its authorization code); every
// token issued from it carries its id; revoking it ends them all.

export class OAuthGrantRepository {
  constructor(private readonly db: TenantSql) {}

  /** A grant of the client's account for one of its users; null when the user is not an active user of that account. */
  async insert(row: { clientId: bigint; accountId: bigint; userId: bigint; scopes: string[] }): Promise<bigint | null> {
    const [inserted] = await this.db.query<{ id: string | bigint }>(
      row,
      `INSERT INTO oauth_grants (account_id, client_id, user_id, scopes)
       SELECT c.account_id, c.id, u.id, $4::text[]
         FROM oauth_clients c JOIN users u ON u.account_id = c.account_id AND u.id = $3 AND u.active
        WHERE c.account_id = $1 AND c.id = $2
       RETURNING id`,
      [String(row.clientId), String(row.userId), row.scopes],
    );
    return inserted ? BigInt(inserted.id) : null;
  }

  /** Marks every grant of a user of the scope's account revoked (deactivating the user), before their tokens are. */
  async revokeAllOfUser(scope: AccountScope, userId: bigint): Promise<void> {
    await this.db.query(scope, 'UPDATE oauth_grants SET revoked_at = now() WHERE account_id = $1 AND user_id = $2 AND revoked_at IS NULL', [String(userId)]);
  }

  /**
   * Marks the grant revoked. Run first in the revoking transaction: it waits for
   * statements that are issuing a token of this grant (they share-lock the row),
   * so the tokens' revocation that follows sees theirs too. A grant of the scope's account.
   */
  async revoke(scope: AccountScope, grantId: bigint): Promise<void> {
    await this.db.query(scope, 'UPDATE oauth_grants SET revoked_at = now() WHERE account_id = $1 AND id = $2 AND revoked_at IS NULL', [String(grantId)]);
  }
}
