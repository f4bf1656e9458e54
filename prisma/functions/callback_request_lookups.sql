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
