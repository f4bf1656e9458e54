-- Trigger function (BEFORE INSERT ON accounts): an account inserted without a
-- subdomain (the column's default '') gets account_subdomain_for(name, id), so
-- that every way of creating an account (the CLI, the first start's "default",
-- fixtures written in SQL) derives it in one place.
CREATE OR REPLACE FUNCTION accounts_subdomain_default()
RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.subdomain IS NULL OR NEW.subdomain = '' THEN
    NEW.subdomain := account_subdomain_for(NEW.name, NEW.id);
  END IF;
  RETURN NEW;
END
$$;
