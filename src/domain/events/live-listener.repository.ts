import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';

/** Seconds a listener's row lives unless renewed (the feed renews it every third of that). */
export const LIVE_LISTENER_SECONDS = 90;

/**
 * live_event_listeners: which accounts a process has live subscribers of. The events'
 * INSERT sends its NOTIFY only when its account has a live row (event-log.repository.ts),
 * so the feed (event-feed.ts) holds one per watched account while it watches.
 */
export class LiveListenerRepository {
  constructor(private readonly db: TenantSql) {}

  /** Holds (or renews) `listener`'s row of the account; the account's expired rows (of processes gone) go. */
  async hold(scope: AccountScope, listener: string): Promise<void> {
    await this.db.query(
      scope,
      `WITH gone AS (DELETE FROM live_event_listeners WHERE account_id = $1 AND expires_at < now())
       INSERT INTO live_event_listeners (account_id, listener, expires_at) SELECT a.id, $2, now() + make_interval(secs => $3) FROM accounts a WHERE a.id = $1
       ON CONFLICT (account_id, listener) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
      [listener, LIVE_LISTENER_SECONDS],
    );
  }

  /** Ends `listener`'s row of the account (its last subscriber of the account left). */
  async release(scope: AccountScope, listener: string): Promise<void> {
    await this.db.query(scope, 'DELETE FROM live_event_listeners WHERE account_id = $1 AND listener = $2', [listener]);
  }
}
