-- Columns added since the tables' first version, one statement each; a statement runs only
-- when columns.sql shows its column missing (IF NOT EXISTS covers a concurrent upgrade from
-- another process). A statement that adds no column fills in the column added just before
-- it: it runs right after that one, in the process that added the column.
ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS owner_label TEXT;
ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS granted_at TIMESTAMPTZ;
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS queued_at TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS grant_owner BYTEA;
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS grant_lease_us BIGINT;
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS grant_label TEXT;
ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS queued_until TIMESTAMPTZ;
-- Names with entries placed before the column existed get a row marked until the last
-- entry's expiry. Entries that processes of an earlier version place or refresh afterwards
-- mark nothing: until every process runs this version, a newcomer may be granted ahead of
-- their waiters (never while the lock is held), and a release may leave them to their
-- 5 s recheck.
INSERT INTO "{table}" AS held (name, owner, fence, lease_end, queued_until)
SELECT name, NULL, 0, now(), MAX(expires_at) FROM "{waiters}" GROUP BY name
ON CONFLICT (name) DO UPDATE
    SET queued_until = GREATEST(held.queued_until, EXCLUDED.queued_until);
