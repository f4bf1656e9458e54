-- Zendesk Support's client fields (issue 25): an identifier the admin may choose, unique in
-- its account (no longer across accounts: one account must not learn that another holds a
-- name), and description and logo_url. The grant endpoints still find a client by its
-- identifier before the account is known: on the plain host, the oldest client holding it
-- (lowest id), which (identifier, id) serves (docs/api.md, "OAuth clients").

-- DropIndex
DROP INDEX "oauth_clients_identifier_key";

-- AlterTable
ALTER TABLE "oauth_clients" ADD COLUMN     "description" TEXT,
ADD COLUMN     "logo_url" TEXT;

-- CreateIndex
CREATE INDEX "oauth_clients_identifier_id_idx" ON "oauth_clients"("identifier", "id");

-- CreateIndex
CREATE UNIQUE INDEX "oauth_clients_account_id_identifier_key" ON "oauth_clients"("account_id", "identifier");
