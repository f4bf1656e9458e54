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
