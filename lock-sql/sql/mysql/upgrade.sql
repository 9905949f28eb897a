-- Columns added since the tables' first version, one statement each; a statement runs only
-- when columns.sql shows its column missing. MySQL has no ADD COLUMN IF NOT EXISTS: a
-- concurrent upgrade from another process shows as a duplicate column, which counts as done.
-- Entries already waiting when `queued_at` arrives get the time of the upgrade: they stay
-- ahead of every entry placed after it.
ALTER TABLE `{table}` ADD COLUMN owner_label VARBINARY(255) NULL;
ALTER TABLE `{table}` ADD COLUMN granted_at DATETIME(6) NULL;
ALTER TABLE `{waiters}` ADD COLUMN queued_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6);
