-- The background engine's jobs (src/jobs/engine.ts): a transactional outbox, claimed with
-- FOR UPDATE SKIP LOCKED under a lease (locked_until), deleted when done; (kind, key) keeps
-- one pending job per key (NULL keys are distinct).

-- CreateTable
CREATE TABLE "jobs" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT,
    "kind" TEXT NOT NULL,
    "key" TEXT,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "run_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "locked_by" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 25,
    "last_error" TEXT,
    "dead_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "jobs_run_at_idx" ON "jobs"("run_at");

-- CreateIndex
CREATE INDEX "jobs_account_id_id_idx" ON "jobs"("account_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_kind_key_key" ON "jobs"("kind", "key");

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
