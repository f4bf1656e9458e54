-- GENERATED from oauth_token_insert's statement in src/ (node dist/scripts/emit-sql-functions.js): edit the TypeScript, not this file.
-- An API token's creation with its audit record and event (OAuthTokenRepository.insert).
-- A PL/pgSQL function so that its plan is cached per server session, behind a transaction pooler too (src/db/sql-function.ts).
CREATE OR REPLACE FUNCTION oauth_token_insert(bigint, bigint, bigint, text, text, text[], timestamptz, bigint, bigint, text, text, text, text, text)
RETURNS TABLE (id bigint, account_id bigint, client_id bigint, user_id bigint, token_prefix text, scopes text[], created_at timestamptz, expires_at timestamptz, used_at timestamptz, grant_type text, grant_id bigint, refresh_token_prefix text, refresh_token_expires_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
WITH created AS (
         INSERT INTO oauth_tokens AS t (account_id, client_id, user_id, token_hash, token_prefix, scopes, expires_at, grant_id)
         SELECT c.account_id, c.id, $3, $4, $5, $6::text[], $7::timestamptz, $8::bigint FROM oauth_clients c
          WHERE c.account_id = $1 AND c.id = $2
            AND ($8::bigint IS NULL OR EXISTS (
              SELECT 1 FROM oauth_grants g WHERE g.account_id = $1 AND g.id = $8::bigint AND g.revoked_at IS NULL FOR SHARE OF g))
         RETURNING t.id, t.account_id, t.client_id, t.user_id, t.token_prefix, coalesce(t.scopes, '{}') AS scopes, t.created_at, t.expires_at, t.used_at, t.grant_type::text AS grant_type, t.grant_id, t.refresh_token_prefix, t.refresh_token_expires_at
       ), audit AS (INSERT INTO audit_logs (account_id, actor_id, actor_name, action, source_type, source_id, source_label, changed_fields, change_description, via, request_id, ip_address) SELECT created.account_id, $9::bigint, $10::text, 'create', 'oauth_token', created.id, left(created.token_prefix || '...', 255), '{}', $11::text, $12::text, $13::text, $14::text FROM created), created_event AS (INSERT INTO events (account_id, type, subject, detail, event, zendesk_event_version) SELECT created.account_id, 'zen:event-type:oauth_token.created', 'zen:oauth_token:' || created.id, jsonb_build_object('id', created.id, 'token', created.token_prefix, 'client_id', created.client_id, 'user_id', created.user_id, 'scopes', coalesce(created.scopes, '{}'), 'created_at', to_char(created.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'expires_at', to_char(created.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'used_at', to_char(created.used_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'refresh_token', created.refresh_token_prefix, 'refresh_token_expires_at', to_char(created.refresh_token_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')), '{}'::jsonb, '2022-06-20' FROM created RETURNING id, account_id, type, CASE WHEN EXISTS (SELECT 1 FROM live_event_listeners l WHERE l.account_id = events.account_id AND l.expires_at > now()) THEN pg_notify('events', id::text) END AS notified), created_event_published AS (INSERT INTO jobs (account_id, kind, payload) SELECT created_event.account_id, 'event.published', jsonb_build_object('event_id', created_event.id) FROM created_event WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = created_event.account_id AND w.status = 'active' AND created_event.type = ANY(w.subscriptions)) RETURNING pg_notify('jobs', '') AS notified)
       SELECT * FROM created;
END
$fn$;
