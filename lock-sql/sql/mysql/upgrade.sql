-- Columns added to the lock table since its first version, one statement each; a statement
-- runs only when columns.sql shows its column missing. MySQL has no ADD COLUMN IF NOT
-- EXISTS: a concurrent upgrade from another process shows as a duplicate column, which
-- counts as done.
ALTER TABLE `{table}` ADD COLUMN owner_label VARBINARY(255) NULL;
ALTER TABLE `{table}` ADD COLUMN granted_at DATETIME(6) NULL;
