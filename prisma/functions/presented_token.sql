-- GENERATED from presented_token's statement in src/ (node dist/scripts/emit-sql-functions.js): edit the TypeScript, not this file.
-- A Bearer token's lookup, with its user and client (PresentedTokenRepository.findPresented): the one statement of the hot path.
-- A PL/pgSQL function so that its plan is cached per server session, behind a transaction pooler too (src/db/sql-function.ts).
CREATE OR REPLACE FUNCTION presented_token(text, text)
RETURNS TABLE (id bigint, account_id bigint, client_id bigint, user_id bigint, token_prefix text, scopes text[], created_at timestamptz, expires_at timestamptz, used_at timestamptz, grant_type text, grant_id bigint, refresh_token_prefix text, refresh_token_expires_at timestamptz, client_scopes text, role text, email text, name text)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
WITH found AS (
         SELECT t.id, t.account_id, t.client_id, t.user_id, t.token_prefix, coalesce(t.scopes, '{}') AS scopes, t.created_at, t.expires_at, t.used_at, t.grant_type::text AS grant_type, t.grant_id, t.refresh_token_prefix, t.refresh_token_expires_at, c.scopes AS client_scopes, u.role::text AS role, u.email, u.name
           FROM oauth_tokens t
           JOIN users u ON u.id = t.user_id AND u.active
           JOIN oauth_clients c ON c.id = t.client_id
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL
            AND (t.expires_at IS NULL OR t.expires_at > now())
            AND ($2::text IS NULL OR t.account_id = (SELECT a.id FROM accounts a WHERE a.subdomain = $2::text))
       ), touched AS (
         UPDATE oauth_tokens o SET used_at = now()
           FROM found
          WHERE o.id = found.id AND (o.used_at IS NULL OR o.used_at < now() - interval '60 seconds')
         RETURNING o.used_at
       )
       SELECT found.id, found.account_id, found.client_id, found.user_id, found.token_prefix, found.scopes, found.created_at,
              found.expires_at, COALESCE((SELECT used_at FROM touched), found.used_at) AS used_at,
              found.grant_type, found.grant_id, found.refresh_token_prefix, found.refresh_token_expires_at,
              found.client_scopes, found.role, found.email, found.name
         FROM found;
END
$fn$;
