-- Columns added to the lock table since its first version, one statement each; a statement
-- runs only when columns.sql shows its column missing. SQLite has no ADD COLUMN IF NOT
-- EXISTS: a concurrent upgrade from another process shows as a duplicate column, which
-- counts as done.
ALTER TABLE "{table}" ADD COLUMN owner_label TEXT;
ALTER TABLE "{table}" ADD COLUMN granted_at INTEGER;
