-- The subdomain an account gets when none is given (new accounts, through the
-- trigger accounts_subdomain_default, and the backfill of existing ones): its
-- name as a slug (lower case, each run of other characters than a-z and 0-9 a
-- single '-', none at either end, at most 63 characters; 'account' when nothing
-- is left), with '-<id>' appended when another account holds it already (and a
-- counter after that, should even that be taken). The result always matches
-- ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ (the accounts_subdomain_format check).
CREATE OR REPLACE FUNCTION account_subdomain_for(p_name TEXT, p_id BIGINT)
RETURNS TEXT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_slug TEXT := trim(BOTH '-' FROM regexp_replace(lower(coalesce(p_name, '')), '[^a-z0-9]+', '-', 'g'));
  v_candidate TEXT;
  v_suffix TEXT;
  v_n INT := 0;
BEGIN
  v_slug := trim(TRAILING '-' FROM left(v_slug, 63));
  IF v_slug = '' THEN
    v_slug := 'account';
  END IF;
  v_candidate := v_slug;
  WHILE EXISTS (SELECT 1 FROM accounts a WHERE a.subdomain = v_candidate AND a.id IS DISTINCT FROM p_id) LOOP
    v_n := v_n + 1;
    v_suffix := '-' || p_id || CASE WHEN v_n > 1 THEN '-' || v_n ELSE '' END;
    v_candidate := trim(TRAILING '-' FROM left(v_slug, 63 - length(v_suffix))) || v_suffix;
  END LOOP;
  RETURN v_candidate;
END
$$;
