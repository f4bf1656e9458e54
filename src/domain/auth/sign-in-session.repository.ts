import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';

// The only module that reads or writes oauth_sessions: the sign-in sessions of the
// pages under /oauth, found by the keyed hash of the random value their cookie
// carries, always within the account the cookie names. A session is live while
// not ended, not expired, its user active and on the password it began with.

export class SignInSessionRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * A session of an active user of the scope's account, lasting `seconds`, its epoch the
   * user's password_changed_at now; null (nothing inserted) when there is no such user.
   */
  async start(scope: AccountScope, row: { userId: bigint; tokenHash: string; seconds: number }): Promise<bigint | null> {
    const [inserted] = await this.db.query<{ id: string | bigint }>(
      scope,
      `INSERT INTO oauth_sessions (account_id, user_id, token_hash, password_changed_at, expires_at)
       SELECT u.account_id, u.id, $3, u.password_changed_at, now() + make_interval(secs => $4::int)
         FROM users u WHERE u.account_id = $1 AND u.id = $2 AND u.active
       RETURNING id`,
      [String(row.userId), row.tokenHash, row.seconds],
    );
    return inserted ? BigInt(inserted.id) : null;
  }

  /** The live session of the scope's account with this hash: its user; null when over (ended, expired, password changed, user inactive) or unknown. */
  async findLive(scope: AccountScope, tokenHash: string): Promise<{ id: bigint; userId: bigint } | null> {
    const [row] = await this.db.query<{ id: string | bigint; user_id: string | bigint }>(
      scope,
      `SELECT s.id, s.user_id FROM oauth_sessions s
         JOIN users u ON u.id = s.user_id AND u.account_id = $1 AND u.active AND u.password_changed_at = s.password_changed_at
        WHERE s.account_id = $1 AND s.token_hash = $2 AND s.ended_at IS NULL AND s.expires_at > now()`,
      [tokenHash],
    );
    return row ? { id: BigInt(row.id), userId: BigInt(row.user_id) } : null;
  }

  /** Ends the session of the scope's account with this hash (sign-out); false when it was over or unknown. */
  async end(scope: AccountScope, tokenHash: string): Promise<boolean> {
    const rows = await this.db.query(
      scope,
      'UPDATE oauth_sessions SET ended_at = now() WHERE account_id = $1 AND token_hash = $2 AND ended_at IS NULL RETURNING id',
      [tokenHash],
    );
    return rows.length > 0;
  }
}
