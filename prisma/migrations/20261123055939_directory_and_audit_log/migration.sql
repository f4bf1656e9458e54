-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "updated_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "groups" ADD COLUMN     "description" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "updated_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "updated_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "voice_phone_numbers" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "mms_enabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "nickname" TEXT,
ADD COLUMN     "sms_enabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "updated_at" TIMESTAMPTZ(3),
ADD COLUMN     "voice_enabled" BOOLEAN NOT NULL DEFAULT true;

-- CreateTable
CREATE TABLE "audit_logs" (
    "id" BIGSERIAL NOT NULL,
    "account_id" BIGINT NOT NULL,
    "actor_id" BIGINT,
    "actor_name" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "source_type" TEXT NOT NULL,
    "source_id" BIGINT NOT NULL,
    "source_label" TEXT NOT NULL,
    "changed_fields" TEXT[],
    "change_description" TEXT NOT NULL,
    "via" TEXT NOT NULL,
    "request_id" TEXT,
    "ip_address" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_logs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_logs_account_id_id_idx" ON "audit_logs"("account_id", "id");

-- CreateIndex
CREATE INDEX "audit_logs_account_id_source_type_id_idx" ON "audit_logs"("account_id", "source_type", "id");

-- CreateIndex
CREATE INDEX "audit_logs_account_id_actor_id_id_idx" ON "audit_logs"("account_id", "actor_id", "id");

-- CreateIndex
CREATE INDEX "audit_logs_account_id_created_at_idx" ON "audit_logs"("account_id", "created_at");

-- Function callback_request_lookups
-- >>> prisma/functions/callback_request_lookups.sql (inlined verbatim by npm run db:migration; edit the file, not this copy)
-- The account's lookups that validation needs: routing mode, whether the phone
-- number is the account's (and not deleted), and which of the requested groups are the account's.
-- No row: the account does not exist.
CREATE OR REPLACE FUNCTION callback_request_lookups(p_account_id BIGINT, p_phone_number_id BIGINT, p_group_ids BIGINT[])
RETURNS TABLE (omnichannel_routing BOOLEAN, phone_found BOOLEAN, found_group_ids BIGINT[])
LANGUAGE sql STABLE AS $$
  SELECT a.omnichannel_routing,
         EXISTS (SELECT 1 FROM voice_phone_numbers p WHERE p.id = p_phone_number_id AND p.account_id = a.id AND p.deleted_at IS NULL),
         ARRAY(SELECT g.id FROM groups g WHERE g.account_id = a.id AND g.id = ANY(p_group_ids) ORDER BY g.id)
    FROM accounts a
   WHERE a.id = p_account_id
$$;
-- <<< prisma/functions/callback_request_lookups.sql
