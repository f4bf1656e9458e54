-- The OAuth 2.0 authorization server (issue 13): client secrets as rows (current
-- and previous, for rotation with a grace period), grants (token families),
-- authorization codes, and refresh tokens and expiry on oauth_tokens.
--
-- Every existing client's secret moves into oauth_client_secrets as its current
-- secret (same keyed hash, same prefix) before the columns go: no client loses it.

-- CreateEnum
CREATE TYPE "OAuthGrantType" AS ENUM ('authorization_code', 'refresh_token', 'client_credentials');

-- AlterTable
ALTER TABLE "oauth_tokens" ADD COLUMN     "grant_id" BIGINT,
ADD COLUMN     "grant_type" "OAuthGrantType",
ADD COLUMN     "refresh_token_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "refresh_token_prefix" TEXT,
ADD COLUMN     "refresh_token_used_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "oauth_client_secrets" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "client_id" BIGINT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "secret_prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_client_secrets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "oauth_grants" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "client_id" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "scopes" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_grants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "oauth_authorization_codes" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "grant_id" BIGINT NOT NULL,
    "client_id" BIGINT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "code_challenge" TEXT,
    "code_challenge_method" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_authorization_codes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "oauth_client_secrets_secret_hash_key" ON "oauth_client_secrets"("secret_hash");

-- CreateIndex
CREATE INDEX "oauth_client_secrets_client_id_idx" ON "oauth_client_secrets"("client_id");

-- CreateIndex
CREATE INDEX "oauth_grants_account_id_client_id_idx" ON "oauth_grants"("account_id", "client_id");

-- CreateIndex
CREATE UNIQUE INDEX "oauth_authorization_codes_code_hash_key" ON "oauth_authorization_codes"("code_hash");

-- CreateIndex
CREATE INDEX "oauth_authorization_codes_grant_id_idx" ON "oauth_authorization_codes"("grant_id");

-- CreateIndex
CREATE INDEX "oauth_tokens_grant_id_idx" ON "oauth_tokens"("grant_id");

-- AddForeignKey
ALTER TABLE "oauth_tokens" ADD CONSTRAINT "oauth_tokens_grant_id_fkey" FOREIGN KEY ("grant_id") REFERENCES "oauth_grants"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_client_secrets" ADD CONSTRAINT "oauth_client_secrets_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "oauth_clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_grants" ADD CONSTRAINT "oauth_grants_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "oauth_clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_grants" ADD CONSTRAINT "oauth_grants_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_authorization_codes" ADD CONSTRAINT "oauth_authorization_codes_grant_id_fkey" FOREIGN KEY ("grant_id") REFERENCES "oauth_grants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Move each client's secret into its first row, then drop the old columns.
INSERT INTO "oauth_client_secrets" ("account_id", "client_id", "secret_hash", "secret_prefix", "created_at")
SELECT "account_id", "id", "secret_hash", "secret_prefix", COALESCE("updated_at", "created_at") FROM "oauth_clients" ORDER BY "id";

-- DropIndex
DROP INDEX "oauth_clients_secret_hash_key";

-- AlterTable
ALTER TABLE "oauth_clients" DROP COLUMN "secret_hash",
DROP COLUMN "secret_prefix";
