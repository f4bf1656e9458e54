-- Limits on what one user or one client can mint (docs/api.md "The authorization
-- request" and "client_credentials"), checked inside the issuing statements:
-- - oauth_client_token_counts: live client_credentials tokens per client, as
--   counters by expiry bucket (an O(1) check on the grant endpoint's hot path);
-- - two indexes that put only a user's live consent tokens and recent consents
--   in range, so that the per-user count at consent reads at most the limit's rows.

-- CreateTable
CREATE TABLE "oauth_client_token_counts" (
    "account_id" BIGINT NOT NULL,
    "client_id" BIGINT NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,
    "shard" SMALLINT NOT NULL,
    "issued" INTEGER NOT NULL,

    CONSTRAINT "oauth_client_token_counts_pkey" PRIMARY KEY ("client_id","ends_at","shard")
);

-- CreateIndex
CREATE INDEX "oauth_grants_user_id_created_at_idx" ON "oauth_grants"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "oauth_tokens_user_id_revoked_at_refresh_token_expires_at_idx" ON "oauth_tokens"("user_id", "revoked_at", "refresh_token_expires_at");

-- AddForeignKey
ALTER TABLE "oauth_client_token_counts" ADD CONSTRAINT "oauth_client_token_counts_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "oauth_clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;
