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
