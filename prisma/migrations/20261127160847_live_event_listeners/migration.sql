-- CreateTable
CREATE TABLE "live_event_listeners" (
    "account_id" BIGINT NOT NULL,
    "listener" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "live_event_listeners_pkey" PRIMARY KEY ("account_id","listener")
);

-- AddForeignKey
ALTER TABLE "live_event_listeners" ADD CONSTRAINT "live_event_listeners_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
