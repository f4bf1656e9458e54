-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "consecutive_failures" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "webhook_invocations" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "webhook_id" BIGINT NOT NULL,
    "event_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_invocations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_invocation_attempts" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "invocation_id" BIGINT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "response" TEXT,

    CONSTRAINT "webhook_invocation_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_invocations_account_id_webhook_id_id_idx" ON "webhook_invocations"("account_id", "webhook_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_invocations_webhook_id_event_id_key" ON "webhook_invocations"("webhook_id", "event_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_invocations_account_id_id_key" ON "webhook_invocations"("account_id", "id");

-- CreateIndex
CREATE INDEX "webhook_invocation_attempts_account_id_invocation_id_id_idx" ON "webhook_invocation_attempts"("account_id", "invocation_id", "id");

-- AddForeignKey
ALTER TABLE "webhook_invocations" ADD CONSTRAINT "webhook_invocations_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_invocations" ADD CONSTRAINT "webhook_invocations_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_invocation_attempts" ADD CONSTRAINT "webhook_invocation_attempts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_invocation_attempts" ADD CONSTRAINT "webhook_invocation_attempts_invocation_id_fkey" FOREIGN KEY ("invocation_id") REFERENCES "webhook_invocations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
