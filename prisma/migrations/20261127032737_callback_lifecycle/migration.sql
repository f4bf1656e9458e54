-- The callback lifecycle (issue 23): statuses offered/accepted/dialing/failed, the
-- request's offer and retry columns, its history, agents' availability, group memberships
-- and the account's lifecycle settings.

-- CreateEnum
CREATE TYPE "AgentState" AS ENUM ('online', 'offline', 'away', 'transfers_only');

-- CreateEnum
CREATE TYPE "AgentCallStatus" AS ENUM ('on_call', 'wrap_up');

-- AlterEnum (no callback request was ever "calling": nothing set it)
CREATE TYPE "CallbackRequestStatus_new" AS ENUM ('queued', 'offered', 'accepted', 'dialing', 'completed', 'failed', 'cancelled');
ALTER TABLE "public"."callback_requests" ALTER COLUMN "status" DROP DEFAULT;
ALTER TABLE "callback_requests" ALTER COLUMN "status" TYPE "CallbackRequestStatus_new" USING ("status"::text::"CallbackRequestStatus_new");
ALTER TYPE "CallbackRequestStatus" RENAME TO "CallbackRequestStatus_old";
ALTER TYPE "CallbackRequestStatus_new" RENAME TO "CallbackRequestStatus";
DROP TYPE "public"."CallbackRequestStatus_old";
ALTER TABLE "callback_requests" ALTER COLUMN "status" SET DEFAULT 'queued';

-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "callback_max_attempts" INTEGER NOT NULL DEFAULT 3,
ADD COLUMN     "callback_offer_timeout" INTEGER NOT NULL DEFAULT 30,
ADD COLUMN     "callback_retry_delay" INTEGER NOT NULL DEFAULT 120,
ADD COLUMN     "wrap_up_time" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "callback_requests" ADD COLUMN     "agent_id" BIGINT,
ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "completed_at" TIMESTAMPTZ(3),
ADD COLUMN     "dialing_at" TIMESTAMPTZ(3),
ADD COLUMN     "offer_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "offer_seq" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "offered_agent_ids" BIGINT[] DEFAULT ARRAY[]::BIGINT[],
ADD COLUMN     "retry_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "callback_request_history" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "callback_request_id" BIGINT NOT NULL,
    "status" "CallbackRequestStatus" NOT NULL,
    "agent_id" BIGINT,
    "reason" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "callback_request_history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_availabilities" (
    "account_id" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "agent_state" "AgentState" NOT NULL DEFAULT 'offline',
    "call_status" "AgentCallStatus",
    "via" TEXT,
    "idle_since" TIMESTAMPTZ(3),
    "online_since" TIMESTAMPTZ(3),
    "available_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "offered_request_id" BIGINT,
    "wrap_up_seq" INTEGER NOT NULL DEFAULT 0,
    "calls_accepted" INTEGER NOT NULL DEFAULT 0,
    "calls_missed" INTEGER NOT NULL DEFAULT 0,
    "callbacks_completed" INTEGER NOT NULL DEFAULT 0,
    "talk_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_availabilities_pkey" PRIMARY KEY ("account_id","user_id")
);

-- CreateTable
CREATE TABLE "group_memberships" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "user_id" BIGINT NOT NULL,
    "group_id" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "group_memberships_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "callback_request_history_account_id_callback_request_id_id_idx" ON "callback_request_history"("account_id", "callback_request_id", "id");

-- CreateIndex
CREATE INDEX "callback_request_history_callback_request_id_id_idx" ON "callback_request_history"("callback_request_id", "id");

-- CreateIndex
CREATE INDEX "agent_availabilities_account_id_agent_state_idle_since_idx" ON "agent_availabilities"("account_id", "agent_state", "idle_since");

-- CreateIndex
CREATE UNIQUE INDEX "agent_availabilities_user_id_key" ON "agent_availabilities"("user_id");

-- CreateIndex
CREATE INDEX "group_memberships_account_id_group_id_user_id_idx" ON "group_memberships"("account_id", "group_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "group_memberships_account_id_user_id_group_id_key" ON "group_memberships"("account_id", "user_id", "group_id");

-- CreateIndex
CREATE UNIQUE INDEX "group_memberships_account_id_id_key" ON "group_memberships"("account_id", "id");

-- CreateIndex
CREATE INDEX "callback_requests_account_id_status_id_idx" ON "callback_requests"("account_id", "status", "id");

-- CreateIndex
CREATE INDEX "callback_requests_account_id_agent_id_id_idx" ON "callback_requests"("account_id", "agent_id", "id");

-- AddForeignKey
ALTER TABLE "callback_request_history" ADD CONSTRAINT "callback_request_history_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "callback_request_history" ADD CONSTRAINT "callback_request_history_callback_request_id_fkey" FOREIGN KEY ("callback_request_id") REFERENCES "callback_requests"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_availabilities" ADD CONSTRAINT "agent_availabilities_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_availabilities" ADD CONSTRAINT "agent_availabilities_account_id_user_id_fkey" FOREIGN KEY ("account_id", "user_id") REFERENCES "users"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group_memberships" ADD CONSTRAINT "group_memberships_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group_memberships" ADD CONSTRAINT "group_memberships_account_id_user_id_fkey" FOREIGN KEY ("account_id", "user_id") REFERENCES "users"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group_memberships" ADD CONSTRAINT "group_memberships_account_id_group_id_fkey" FOREIGN KEY ("account_id", "group_id") REFERENCES "groups"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The settings' ranges (docs/api.md, "Account settings"); the service answers 422 before these.
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_callback_settings_range" CHECK (
  callback_offer_timeout BETWEEN 1 AND 600 AND callback_retry_delay BETWEEN 0 AND 86400
  AND callback_max_attempts BETWEEN 1 AND 10 AND wrap_up_time BETWEEN 0 AND 3600);

ALTER TABLE "agent_availabilities" ADD CONSTRAINT "agent_availabilities_via" CHECK (via IS NULL OR via IN ('client', 'phone'));
