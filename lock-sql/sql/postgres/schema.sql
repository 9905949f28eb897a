-- Statements run in order, each ending with `;` at the end of a line. The lock table is
-- created with every column; tables made by earlier versions get the newer columns from
-- upgrade.sql.
CREATE TABLE IF NOT EXISTS "{table}" (
    name        TEXT        NOT NULL PRIMARY KEY,
    owner       BYTEA,
    fence       BIGINT      NOT NULL,
    lease_end   TIMESTAMPTZ NOT NULL,
    owner_label TEXT,
    granted_at  TIMESTAMPTZ,
    -- Until when a waiter entry of the name may be live (acquire.sql moves it past every
    -- entry it places or refreshes); NULL: none was ever placed.
    queued_until TIMESTAMPTZ
);

-- Acquisitions waiting now: one entry each, refreshed while it waits, ignored once expired;
-- served in the order of `queued_at`, the time of the first entry. The grant terms (the
-- owner token, lease and label the acquisition would hold with) let a release grant the
-- first waiter the lock in its own statement; an entry without them is only woken.
CREATE TABLE IF NOT EXISTS "{waiters}" (
    name           TEXT        NOT NULL,
    waiter         BYTEA       NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL,
    queued_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    grant_owner    BYTEA,
    grant_lease_us BIGINT,
    grant_label    TEXT,
    PRIMARY KEY (name, waiter)
);

-- Semaphores and read-write locks: one row per name and kind, holding the claim state
-- (fencing counter, holders with leases, queue) as text, changed by compare-and-set on version.
CREATE TABLE IF NOT EXISTS "{claims}" (
    name    TEXT   NOT NULL,
    kind    TEXT   NOT NULL,
    state   BYTEA  NOT NULL,
    version BIGINT NOT NULL,
    PRIMARY KEY (name, kind)
);
