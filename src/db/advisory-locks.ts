// Every advisory-lock namespace of the service, in one place, so that no two
// uses can pick the same one by accident. A namespace is the first argument of
// the two-key form pg_advisory_(xact_)lock(namespace, key); the migration lock
// uses the one-key form with its constant as the whole key. Any constants work;
// they only have to be the same in every process (and distinct here).
//
// SQL cannot import this module: the database functions write the number
// literally (prisma/functions/*.sql), and test/sql-functions.test.ts checks
// that they use exactly the constants declared here.

export const ADVISORY_LOCKS = {
  /** pg_advisory_lock(migration): serialises migrations (and the first admin) across starting processes (src/db/create-db.ts) */
  migration: 727073690,
  /** pg_advisory_xact_lock(rateWindow, hashtext(key)): one decision of a rolling window at a time per key (prisma/functions/rate_window_take.sql) */
  rateWindow: 727073691,
  /**
   * Retired: the login throttle's own per-email lock, before it used the rolling
   * window (it now takes rateWindow on its keys). Kept so that it is not reused while
   * processes of an older version may still run beside newer ones.
   */
  retiredLoginThrottle: 727073692,
  /** pg_advisory_xact_lock(webhookLimit, hashtext(account id)): one webhook creation at a time per account, under its limit (src/domain/webhooks/webhook.repository.ts) */
  webhookLimit: 727073693,
  /**
   * pg_advisory_xact_lock(callbackLifecycle, hashtext(account id)): one lifecycle decision at a time per account
   * (routing, offers, outcomes, availability: src/domain/voice/callback-lifecycle.repository.ts), in every process
   */
  callbackLifecycle: 727073694,
} as const;

/** The migration lock's key (create-db.ts: `import { MIGRATION_LOCK_KEY } from './advisory-locks'`). */
export const MIGRATION_LOCK_KEY = ADVISORY_LOCKS.migration;
