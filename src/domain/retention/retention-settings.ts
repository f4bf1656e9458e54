// How long the retention job (docs/api.md, "Retention") keeps what is over, and how it
// paces itself. Parsed from the environment by src/config.ts; the defaults are issue 24's.

export interface RetentionSettings {
  /** authorization codes: removed once used or expired for more than this (CODE_RETENTION_SECONDS) */
  codeSeconds: number;
  /** grants (refresh families): revoked, or dead, for more than this (GRANT_RETENTION_SECONDS) */
  grantSeconds: number;
  /** tokens: revoked, or expired with their refresh token, for more than this (TOKEN_RETENTION_SECONDS) */
  tokenSeconds: number;
  /** client secrets: grace period over for more than this (SECRET_RETENTION_SECONDS) */
  secretSeconds: number;
  /** webhook invocations (finished) and events: older than this (WEBHOOK_RETENTION_SECONDS) */
  webhookSeconds: number;
  /** dead background jobs: dead for more than this (JOB_RETENTION_SECONDS) */
  jobSeconds: number;
  /** audit records: older than this many days; 0 keeps them forever (AUDIT_RETENTION_DAYS) */
  auditDays: number;
  /** finished callback requests: finished more than this many days ago; 0 keeps them forever (CALLBACK_RETENTION_DAYS) */
  callbackDays: number;
  /** how often the recurring job runs (RETENTION_INTERVAL_SECONDS) */
  intervalSeconds: number;
  /** rows deleted per statement, each its own transaction (RETENTION_BATCH_SIZE) */
  batchSize: number;
  /** least pause between two batches (the service also waits 8 × what the batch took), so that live traffic keeps the database; 0: none (RETENTION_PAUSE_MS) */
  pauseMs: number;
}

export const RETENTION_DEFAULTS: RetentionSettings = {
  codeSeconds: 3600,
  grantSeconds: 86_400,
  tokenSeconds: 604_800,
  secretSeconds: 86_400,
  webhookSeconds: 604_800,
  jobSeconds: 604_800,
  auditDays: 400,
  callbackDays: 90,
  intervalSeconds: 600,
  batchSize: 1000,
  pauseMs: 20,
};

/** The recurring job that runs the purge (src/jobs/retention.ts); its row's run_at is the next run. */
export const RETENTION_JOB = 'retention.purge';
