// The list floor's one statement (bench/references/list-floor.ts); the report quotes it.
//   $1 the HMAC of the Bearer token, $2 the id after which the page starts (0: first page),
//   $3 page size + 1 (the extra row says whether there is a next page)
// The first CTE authenticates the way the floor does (the token row by its hash,
// not revoked) and gives the caller's account; the second reads the page of that
// account's live tokens in id order after the cursor (index oauth_tokens(account_id,
// id), stopping at the limit); then each row of the page looks up its client's name
// and its user's email by primary key. (Written as joins, over the whole account
// before the limit or over the page after it, PostgreSQL planned hash joins over
// every user and client on the bench's data: 2-3 times the time of this form.)
// No row: unknown token (401); one row of nulls: an empty page.
export const LIST_FLOOR_SQL = `WITH viewer AS (
  SELECT account_id FROM oauth_tokens WHERE token_hash = $1 AND revoked_at IS NULL
), page AS (
  SELECT t.id, t.client_id, t.user_id, t.token_prefix, t.scopes, t.created_at, t.expires_at, t.used_at,
         t.refresh_token_prefix, t.refresh_token_expires_at
    FROM oauth_tokens t
   WHERE t.account_id = (SELECT account_id FROM viewer) AND t.id > $2
     AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now() OR t.refresh_token_expires_at > now())
   ORDER BY t.id
   LIMIT $3
)
SELECT p.*,
       (SELECT c.name FROM oauth_clients c WHERE c.id = p.client_id) AS client_name,
       (SELECT u.email FROM users u WHERE u.id = p.user_id) AS user_email
  FROM viewer LEFT JOIN page p ON true
 ORDER BY p.id`;
