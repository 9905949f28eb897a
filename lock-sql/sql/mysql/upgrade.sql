-- Columns added since the tables' first version, one statement each; a statement runs only
-- when columns.sql shows its column missing. MySQL has no ADD COLUMN IF NOT EXISTS: a
-- concurrent upgrade from another process shows as a duplicate column, which counts as done.
-- A statement that adds no column fills in the column added just before it: it runs right
-- after that one, in the process that added the column.
-- Entries already waiting when `queued_at` arrives get the time of the upgrade: they stay
-- ahead of every entry placed after it.
ALTER TABLE `{table}` ADD COLUMN owner_label VARBINARY(255) NULL;
ALTER TABLE `{table}` ADD COLUMN granted_at DATETIME(6) NULL;
ALTER TABLE `{waiters}` ADD COLUMN queued_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6);
ALTER TABLE `{table}` ADD COLUMN queued_until DATETIME(6) NULL;
-- Names with entries placed before the column existed get a row marked until the last
-- entry's expiry. Entries that processes of an earlier version place or refresh afterwards
-- mark nothing: until every process runs this version, a newcomer may be granted ahead of
-- their waiters (never while the lock is held).
INSERT INTO `{table}` (name, owner, fence, lease_end, queued_until)
SELECT name, NULL, 0, UTC_TIMESTAMP(6), MAX(expires_at) FROM `{waiters}` GROUP BY name
ON DUPLICATE KEY UPDATE queued_until = VALUES(queued_until);
-- Entries placed by processes of an earlier version park nothing: a release wakes none of
-- them, and they read their place in line as before.
ALTER TABLE `{waiters}` ADD COLUMN sleeper BIGINT UNSIGNED NULL;
-- Entries placed by processes of an earlier version carry no grant terms: a release grants
-- them nothing and rings them as before, and they take their turn themselves.
ALTER TABLE `{waiters}` ADD COLUMN grant_owner BINARY(16) NULL;
ALTER TABLE `{waiters}` ADD COLUMN grant_lease_us BIGINT NULL;
ALTER TABLE `{waiters}` ADD COLUMN grant_label VARBINARY(255) NULL;
