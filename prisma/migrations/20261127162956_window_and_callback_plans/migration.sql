-- Function create_callback_request
-- >>> prisma/functions/create_callback_request.sql (inlined verbatim by npm run db:migration; edit the file, not this copy)
-- Callback-request creation in one round trip (API.md §7), exact across processes.
--
-- Validates the account's ids, spends a slot of the account's rolling window
-- (rate_window_take on the key '<p_bucket>:<account id>') and stores the request,
-- all in the caller's one statement: the window's advisory lock is released when
-- that statement's transaction ends.
-- Returns no row when the account does not exist; otherwise the lookups, and
-- new_id null when an id is not the account's (nothing spent) or the window is
-- full (retry_after set). queued_ahead: the queued requests of the same number
-- before this one. The routing rule stays with the caller (the domain layer): it
-- passes the groups that route under either setting of the account's omnichannel
-- routing, and the row gets the one that applies.
--
-- SET enable_seqscan = off: every statement here reads a few rows by an index
-- (the account's, its phone number's, its window's, its queue's), and a session
-- keeps the plans it made on its first calls. Made while these tables were empty
-- or small (a new database, or one analysed before its first requests), they were
-- sequential scans, kept as the tables grew: a creation then read every hit and
-- every request of all accounts (bench/tuning-log.md, "Scenario 7 again").
CREATE OR REPLACE FUNCTION create_callback_request(
  p_account_id BIGINT, p_phone_number_id BIGINT, p_requester_phone_number TEXT, p_group_ids BIGINT[],
  p_routed_if_omnichannel BIGINT[], p_routed_otherwise BIGINT[],
  p_created_by_id BIGINT, p_bucket TEXT, p_limit INT, p_window_seconds INT)
RETURNS TABLE (
  phone_found BOOLEAN, found_group_ids BIGINT[], routed_group_ids BIGINT[], new_id BIGINT,
  decided_at TIMESTAMPTZ, used INT, retry_after INT, queued_ahead INT)
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
AS $$
DECLARE
  v_omnichannel BOOLEAN;
  v_allowed BOOLEAN;
BEGIN
  SELECT l.omnichannel_routing, l.phone_found, l.found_group_ids INTO v_omnichannel, phone_found, found_group_ids
    FROM callback_request_lookups(p_account_id, p_phone_number_id, p_group_ids) l;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF NOT phone_found OR cardinality(found_group_ids) <> cardinality(p_group_ids) THEN
    RETURN NEXT;
    RETURN;
  END IF;
  -- The number must stay live until this request is stored: its row's key-share lock
  -- waits for a deletion in progress (which locks the row FOR UPDATE) and then sees
  -- deleted_at; a deletion that comes later waits for this transaction, and cancels
  -- the request with the number's other queued ones. Before the window: nothing spent.
  PERFORM 1 FROM voice_phone_numbers p
    WHERE p.id = p_phone_number_id AND p.account_id = p_account_id AND p.deleted_at IS NULL FOR KEY SHARE;
  IF NOT FOUND THEN
    phone_found := false;
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT t.allowed, t.decided_at, t.used, t.retry_after INTO v_allowed, decided_at, used, retry_after
    FROM rate_window_take(p_bucket || ':' || p_account_id, p_limit, p_window_seconds) t;
  IF v_allowed THEN
    routed_group_ids := CASE WHEN v_omnichannel THEN p_routed_if_omnichannel ELSE p_routed_otherwise END;
    -- counted before the insert and after the lock: every queued request of this number is ahead
    SELECT count(*)::INT INTO queued_ahead
      FROM callback_requests q
     WHERE q.account_id = p_account_id AND q.phone_number_id = p_phone_number_id AND q.status = 'queued';
    INSERT INTO callback_requests
      (account_id, phone_number_id, requester_phone_number, requested_group_ids, routed_group_ids, status, created_by_id, created_at)
    VALUES
      (p_account_id, p_phone_number_id, p_requester_phone_number, p_group_ids, routed_group_ids, 'queued', p_created_by_id, decided_at)
    RETURNING id INTO new_id;
  END IF;
  RETURN NEXT;
END
$$;
-- <<< prisma/functions/create_callback_request.sql

-- Function rate_window_take
-- >>> prisma/functions/rate_window_take.sql (inlined verbatim by npm run db:migration; edit the file, not this copy)
-- One decision of a rolling-window limit: at most p_limit hits per key in any
-- p_window_seconds. The one primitive of every limit of the service: callback
-- creation per account ('callback_requests:<account id>'), failed Basic logins
-- per email ('login-email:<HMAC of the email>') and per client address
-- ('login-address:<HMAC of the address>').
--
-- Exact across processes: a transaction-scoped advisory lock on the key
-- (namespace 727073691 = ADVISORY_LOCKS.rateWindow, src/db/advisory-locks.ts;
-- keys whose hashtext collide only wait on each other, never share a count)
-- serialises the decisions on a key. A VOLATILE PL/pgSQL function under READ
-- COMMITTED takes a fresh snapshot for each statement, so every statement after
-- the lock sees what the previous holder of the lock committed. The lock is held
-- until the caller's transaction ends. The hit is recorded only when allowed, and
-- vanishes if the caller's transaction rolls back: a refused or failed request
-- costs nothing.
--
-- The same call prunes: the key's hits that left the window, and the few oldest
-- expired hits of any key (keys used once, such as sprayed emails, would
-- otherwise stay forever).
--
--   allowed:     the hit was recorded
--   hit_id:      the recorded hit (null when refused), for the caller to move or delete
--   decided_at:  the database clock after the lock (times increase in decision order), to the ms
--   used:        hits in the window before this one (at most p_limit: the newest ones)
--   retry_after: seconds until the oldest of those leaves the window (when refused)
--
-- Its statements are planned once per session (force_generic_plan) and by their
-- indexes (enable_seqscan off), whatever the table held when they were planned:
-- planned anew at each call, the prune's range on expires_at cost ~70 µs (the
-- planner probes the index's end, where pruned hits leave dead entries); planned
-- while the table was empty or small, each statement kept a sequential scan of
-- every key's hits (bench/tuning-log.md, "Scenario 7 again").
CREATE OR REPLACE FUNCTION rate_window_take(p_key TEXT, p_limit INT, p_window_seconds INT)
RETURNS TABLE (allowed BOOLEAN, hit_id BIGINT, decided_at TIMESTAMPTZ, used INT, retry_after INT)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
  v_window INTERVAL := make_interval(secs => p_window_seconds);
  v_oldest TIMESTAMPTZ;
BEGIN
  PERFORM pg_advisory_xact_lock(727073691, hashtext(p_key));
  decided_at := date_trunc('milliseconds', clock_timestamp());
  DELETE FROM rate_window_hits h
   WHERE h.key = p_key AND h.created_at <= decided_at - v_window;
  -- by the locked rows' ctids (a TID scan): as a join on id, the plan made while
  -- the table was empty read every hit through the primary key at each call
  DELETE FROM rate_window_hits h
   WHERE h.ctid = ANY (ARRAY(SELECT e.ctid FROM rate_window_hits e
                              WHERE e.expires_at <= decided_at
                              ORDER BY e.expires_at, e.id
                              LIMIT 10 FOR UPDATE SKIP LOCKED));
  -- the limit lifts when the p_limit-th newest hit leaves the window
  SELECT count(*)::INT, min(r.created_at) INTO used, v_oldest
    FROM (SELECT h.created_at FROM rate_window_hits h
           WHERE h.key = p_key AND h.created_at > decided_at - v_window
           ORDER BY h.created_at DESC
           LIMIT p_limit) r;
  allowed := used < p_limit;
  IF allowed THEN
    INSERT INTO rate_window_hits (key, created_at, expires_at)
    VALUES (p_key, decided_at, decided_at + v_window)
    RETURNING id INTO hit_id;
  ELSE
    retry_after := GREATEST(1, CEIL(EXTRACT(EPOCH FROM v_oldest + v_window - decided_at)))::INT;
  END IF;
  RETURN NEXT;
END
$$;
-- <<< prisma/functions/rate_window_take.sql
