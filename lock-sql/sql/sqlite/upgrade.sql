-- Columns added since the tables' first version, one statement each; a statement runs only
-- when columns.sql shows its column missing. SQLite has no ADD COLUMN IF NOT EXISTS: a
-- concurrent upgrade from another process shows as a duplicate column, which counts as done.
-- Entries already waiting when `queued_at` arrives get 0: they stay ahead of every entry
-- placed after it.
ALTER TABLE "{table}" ADD COLUMN owner_label TEXT;
ALTER TABLE "{table}" ADD COLUMN granted_at INTEGER;
ALTER TABLE "{waiters}" ADD COLUMN queued_at INTEGER NOT NULL DEFAULT 0;
-- Entries placed by processes of an earlier version carry no grant terms: a release grants
-- them nothing, and they take their turn themselves.
ALTER TABLE "{waiters}" ADD COLUMN grant_owner BLOB;
ALTER TABLE "{waiters}" ADD COLUMN grant_lease_ms INTEGER;
ALTER TABLE "{waiters}" ADD COLUMN grant_label TEXT;
