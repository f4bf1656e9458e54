-- Issue 25: sign-in sessions stored server-side (so that /oauth/logout ends one for good), and the
-- scopes of a remembered consent's authorization code (a subset of its grant's).

-- AlterTable
ALTER TABLE "oauth_authorization_codes" ADD COLUMN     "scopes" TEXT[];

-- CreateTable
CREATE TABLE "oauth_sessions" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "password_changed_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "oauth_sessions_token_hash_key" ON "oauth_sessions"("token_hash");

-- CreateIndex
CREATE INDEX "oauth_sessions_user_id_idx" ON "oauth_sessions"("user_id");

-- AddForeignKey
ALTER TABLE "oauth_sessions" ADD CONSTRAINT "oauth_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: the retention purge's range, word for word RULES.oauth_sessions of
-- src/domain/retention/retention.repository.ts (a session is over once ended or expired).
CREATE INDEX "oauth_sessions_retention_idx" ON "oauth_sessions" ((least("ended_at", "expires_at")));
