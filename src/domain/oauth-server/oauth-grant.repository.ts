import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { CODE_LIFETIME_SECONDS } from './oauth-authorization-code.repository';
import { LIVE_GRANT, type PersonScope } from './authorized-app.repository';

// The only module that reads or writes oauth_grants: the families of tokens. A
// grant is created when a user consents (with its authorization code); every
// token issued from it carries its id; revoking it ends them all. (A person's
// list of their live grants reads them too: authorized-app.repository.ts.)

/**
 * The user's live grants (see insert), counted in a CTE `live` (column n): $1 the account,
 * $3 the user, $5 the limit (at most that many index entries read of each kind), $6 the code lifetime.
 */
const LIVE = `live AS (
         SELECT (SELECT count(*) FROM (
                   SELECT 1 FROM oauth_tokens t
                    WHERE t.user_id = $3 AND t.revoked_at IS NULL AND t.refresh_token_expires_at > now() AND t.account_id = $1 LIMIT $5) tokens)
              + (SELECT count(*) FROM (
                   SELECT 1 FROM oauth_grants g
                     JOIN oauth_authorization_codes k ON k.grant_id = g.id AND k.account_id = $1 AND k.used_at IS NULL AND k.expires_at > now()
                    WHERE g.user_id = $3 AND g.revoked_at IS NULL AND g.created_at > now() - make_interval(secs => $6::int) AND g.account_id = $1
                    LIMIT $5) pending) AS n
       )`;

/** A grant's client, account, user and scopes. */
interface GrantRow {
  clientId: bigint;
  accountId: bigint;
  userId: bigint;
  scopes: string[];
}

/** `WITH live AS (…)` then `rest` (which selects id and live), on the row's parameters ($2 client, $3 user, $4 scopes, $5 limit, $6 code lifetime). */
async function withLive(db: TenantSql, row: GrantRow, liveLimit: number, rest: string): Promise<{ id: bigint | null; live: number }> {
  const [result] = await db.query<{ id: string | bigint | null; live: string | number }>(
    row,
    `WITH ${LIVE}${rest}`,
    [String(row.clientId), String(row.userId), row.scopes, liveLimit, CODE_LIFETIME_SECONDS],
  );
  return { id: result.id === null ? null : BigInt(result.id), live: Number(result.live) };
}

export class OAuthGrantRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * A grant of the client's account for one of its users, while the user holds
   * fewer than `liveLimit` live grants: consents whose code can still be redeemed,
   * and consent tokens (authorization_code and their rotations) not revoked whose
   * refresh token has not expired, of that account. The count, in the same
   * statement, reads at most `liveLimit` index entries of each kind (only live ones
   * are in the indexes' range). `id` is null when nothing was inserted: `live` ≥ the
   * limit, or the user is not an active user of that account (a user of another
   * account counts 0: nothing of theirs is read).
   */
  async insert(row: GrantRow, liveLimit: number): Promise<{ id: bigint | null; live: number }> {
    return withLive(
      this.db,
      row,
      liveLimit,
      `, inserted AS (
         INSERT INTO oauth_grants (account_id, client_id, user_id, scopes)
         SELECT c.account_id, c.id, u.id, $4::text[]
           FROM oauth_clients c JOIN users u ON u.account_id = c.account_id AND u.id = $3 AND u.active
          WHERE c.account_id = $1 AND c.id = $2 AND (SELECT n FROM live) < $5
         RETURNING id
       )
       SELECT (SELECT id FROM inserted) AS id, (SELECT n FROM live) AS live`,
    );
  }

  /**
   * Remembered consent: the newest grant of the scope's account for this client and
   * user (active) that covers every scope in `scopes`, is live (not revoked, and in the
   * person's list of authorized apps: a live token or a code still usable), and none of whose
   * tokens was ever revoked other than by rotation (an admin, the user, the app or a
   * password change took its access away: consent is asked again). `id` null: none.
   * `live`: the user's live grants, as insert counts them (the caller refuses at the limit).
   */
  async findRemembered(row: GrantRow, liveLimit: number): Promise<{ id: bigint | null; live: number }> {
    return withLive(
      this.db,
      row,
      liveLimit,
      `
       SELECT (SELECT g.id FROM oauth_grants g JOIN users u ON u.id = g.user_id AND u.account_id = $1 AND u.active
                WHERE g.account_id = $1 AND g.client_id = $2 AND g.user_id = $3 AND g.scopes @> $4::text[] AND ${LIVE_GRANT}
                  AND NOT EXISTS (SELECT 1 FROM oauth_tokens t
                                   WHERE t.account_id = $1 AND t.grant_id = g.id AND t.revoked_at IS NOT NULL AND t.refresh_token_used_at IS NULL)
                ORDER BY g.id DESC LIMIT 1) AS id,
              (SELECT n FROM live) AS live`,
    );
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

  /**
   * Marks a live grant of the person revoked (their own revocation, from their
   * authorized apps), first in the revoking transaction as revoke() is; false
   * when the person has no such live grant (another user's, another account's,
   * revoked, or with nothing live left), and nothing changes.
   */
  async revokeOwn(scope: PersonScope, grantId: bigint): Promise<boolean> {
    const rows = await this.db.query(
      scope,
      `UPDATE oauth_grants g SET revoked_at = now() WHERE g.account_id = $1 AND g.user_id = $2 AND g.id = $3 AND ${LIVE_GRANT} RETURNING g.id`,
      [String(scope.userId), String(grantId)],
    );
    return rows.length > 0;
  }
}
