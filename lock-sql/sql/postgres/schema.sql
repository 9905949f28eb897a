-- Statements run in order, each ending with `;` at the end of a line. The lock table is
-- created with every column; tables made by earlier versions get the newer columns from
-- upgrade.sql.
CREATE TABLE IF NOT EXISTS "{table}" (
    name        TEXT        NOT NULL PRIMARY KEY,
    owner       BYTEA,
    fence       BIGINT      NOT NULL,
    lease_end   TIMESTAMPTZ NOT NULL,
    owner_label TEXT,
    granted_at  TIMESTAMPTZ
);

-- Acquisitions waiting now: one entry each, refreshed while it waits, ignored once expired.
CREATE TABLE IF NOT EXISTS "{waiters}" (
    name       TEXT        NOT NULL,
    waiter     BYTEA       NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (name, waiter)
);
