-- Callback-request creation in one round trip (API.md §7), exact across processes.
--
-- A VOLATILE PL/pgSQL function under READ COMMITTED takes a fresh snapshot for
-- each statement it runs, so every statement after the advisory lock sees what
-- the previous holder of the lock committed. That is what the service did before
-- with BEGIN + lock, a statement, and COMMIT (three round trips); here it is one
-- statement, and the lock is released when that statement's transaction ends.

-- The account's lookups that validation needs: routing mode, whether the phone
-- number is the account's, and which of the requested groups are the account's.
-- No row: the account does not exist.
CREATE FUNCTION callback_request_lookups(p_account_id BIGINT, p_phone_number_id BIGINT, p_group_ids BIGINT[])
RETURNS TABLE (omnichannel_routing BOOLEAN, phone_found BOOLEAN, found_group_ids BIGINT[])
LANGUAGE sql STABLE AS $$
  SELECT a.omnichannel_routing,
         EXISTS (SELECT 1 FROM voice_phone_numbers p WHERE p.id = p_phone_number_id AND p.account_id = a.id),
         ARRAY(SELECT g.id FROM groups g WHERE g.account_id = a.id AND g.id = ANY(p_group_ids) ORDER BY g.id)
    FROM accounts a
   WHERE a.id = p_account_id
$$;

-- One decision of a rolling-window limit: at most p_limit hits per account and
-- bucket in any p_window_seconds. Serialised per account by a transaction-scoped
-- advisory lock (namespace 727073691; the migration lock and the login throttle
-- use others; ids are BIGINT and the lock takes their low 31 bits, so accounts
-- that collide only wait on each other, never share a count). The hit is recorded
-- when allowed, and vanishes if the caller's transaction rolls back: a refused or
-- failed request costs nothing.
--   decided_at:  the database clock after the lock (times increase in decision order), to the ms
--   used:        hits in the window before this one
--   retry_after: seconds until the oldest hit leaves the window (when refused)
CREATE FUNCTION rate_limit_take(p_account_id BIGINT, p_bucket TEXT, p_limit INT, p_window_seconds INT)
RETURNS TABLE (allowed BOOLEAN, decided_at TIMESTAMPTZ, used INT, retry_after INT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_window INTERVAL := make_interval(secs => p_window_seconds);
  v_oldest TIMESTAMPTZ;
BEGIN
  PERFORM pg_advisory_xact_lock(727073691, (p_account_id & 2147483647)::INT);
  decided_at := date_trunc('milliseconds', clock_timestamp());
  DELETE FROM rate_limit_hits h
   WHERE h.account_id = p_account_id AND h.bucket = p_bucket AND h.created_at <= decided_at - v_window;
  SELECT count(*)::INT, min(h.created_at) INTO used, v_oldest
    FROM rate_limit_hits h
   WHERE h.account_id = p_account_id AND h.bucket = p_bucket AND h.created_at > decided_at - v_window;
  allowed := used < p_limit;
  IF allowed THEN
    INSERT INTO rate_limit_hits (account_id, bucket, created_at) VALUES (p_account_id, p_bucket, decided_at);
  ELSE
    retry_after := GREATEST(1, CEIL(EXTRACT(EPOCH FROM v_oldest + v_window - decided_at)))::INT;
  END IF;
  RETURN NEXT;
END
$$;

-- Validates the account's ids, spends a slot of the window and stores the request.
-- Returns no row when the account does not exist; otherwise the lookups, and
-- new_id null when an id is not the account's (nothing spent) or the window is
-- full (retry_after set). queued_ahead: the queued requests of the same number
-- before this one. The routing rule stays with the caller (the domain layer): it
-- passes the groups that route under either setting of the account's omnichannel
-- routing, and the row gets the one that applies.
CREATE FUNCTION create_callback_request(
  p_account_id BIGINT, p_phone_number_id BIGINT, p_requester_phone_number TEXT, p_group_ids BIGINT[],
  p_routed_if_omnichannel BIGINT[], p_routed_otherwise BIGINT[],
  p_created_by_id BIGINT, p_bucket TEXT, p_limit INT, p_window_seconds INT)
RETURNS TABLE (
  phone_found BOOLEAN, found_group_ids BIGINT[], routed_group_ids BIGINT[], new_id BIGINT,
  decided_at TIMESTAMPTZ, used INT, retry_after INT, queued_ahead INT)
LANGUAGE plpgsql VOLATILE AS $$
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
  SELECT t.allowed, t.decided_at, t.used, t.retry_after INTO v_allowed, decided_at, used, retry_after
    FROM rate_limit_take(p_account_id, p_bucket, p_limit, p_window_seconds) t;
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
