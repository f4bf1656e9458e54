-- The retention purge (src/domain/retention, docs/api.md "Retention"): its runs, and an
-- index for each of its deletes, so that each is a range of one index. The plain ones come
-- from schema.prisma; the expression and partial ones below cannot be written there (the
-- schema engine leaves them alone) and are written by hand, their expressions word for word
-- those of src/domain/retention/retention.repository.ts.

-- CreateTable
CREATE TABLE "retention_runs" (
    "id" BIGSERIAL NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "removed" JSONB NOT NULL,
    "stopped" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "retention_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_logs_created_at_idx" ON "audit_logs"("created_at");

-- CreateIndex
CREATE INDEX "events_time_idx" ON "events"("time");

-- CreateIndex
CREATE INDEX "oauth_client_secrets_expires_at_idx" ON "oauth_client_secrets"("expires_at");

-- CreateIndex
CREATE INDEX "oauth_client_token_counts_ends_at_idx" ON "oauth_client_token_counts"("ends_at");

-- CreateIndex
CREATE INDEX "oauth_grants_created_at_idx" ON "oauth_grants"("created_at");

-- CreateIndex
CREATE INDEX "webhook_invocations_completed_at_event_id_idx" ON "webhook_invocations"("completed_at", "event_id");

-- Hand-written: the tokens' "over since" (revoked, or access and refresh token expired). The
-- only new index on oauth_tokens, whose inserts are the hot path.
CREATE INDEX "oauth_tokens_retention_idx" ON "oauth_tokens" ((least("revoked_at", CASE WHEN "expires_at" IS NOT NULL THEN greatest("expires_at", "refresh_token_expires_at") END)));

-- Hand-written: codes over since used, or since expired unused.
CREATE INDEX "oauth_authorization_codes_retention_idx" ON "oauth_authorization_codes" ((least("used_at", "expires_at")));

-- Hand-written: dead jobs only (live ones, the hot part of the table, are not in it).
CREATE INDEX "jobs_dead_at_idx" ON "jobs" ("dead_at") WHERE "dead_at" IS NOT NULL;

-- Hand-written: finished callback requests by when they finished.
CREATE INDEX "callback_requests_retention_idx" ON "callback_requests" ((coalesce("completed_at", "updated_at", "created_at")))
  WHERE "status" IN ('completed', 'failed', 'cancelled');
