-- The events the service emits (docs/api.md, "Events"), in Zendesk's envelope: written in the
-- transaction of the change, beside its audit record, with an event.published job and a NOTIFY.

-- CreateTable
CREATE TABLE "events" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "detail" JSONB NOT NULL,
    "event" JSONB NOT NULL DEFAULT '{}',
    "time" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "zendesk_event_version" TEXT NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "events_account_id_time_idx" ON "events"("account_id", "time");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
