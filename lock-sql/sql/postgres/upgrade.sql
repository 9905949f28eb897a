-- Columns added since the tables' first version, one statement each; a statement runs only
-- when columns.sql shows its column missing (IF NOT EXISTS covers a concurrent upgrade from
-- another process).
ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS owner_label TEXT;
ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS granted_at TIMESTAMPTZ;
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS queued_at TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS grant_owner BYTEA;
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS grant_lease_us BIGINT;
ALTER TABLE "{waiters}" ADD COLUMN IF NOT EXISTS grant_label TEXT;
