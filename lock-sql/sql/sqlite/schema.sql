-- Statements run in order, each ending with `;` at the end of a line. Times are milliseconds
-- since 1970 by the database host's clock. The lock table is created with every column;
-- tables made by earlier versions get the newer columns from upgrade.sql.
CREATE TABLE IF NOT EXISTS "{table}" (
    name        TEXT    NOT NULL PRIMARY KEY,
    owner       BLOB,
    fence       INTEGER NOT NULL,
    lease_end   INTEGER NOT NULL,
    owner_label TEXT,
    granted_at  INTEGER
);

-- Acquisitions waiting now: one entry each, refreshed while it waits, ignored once expired;
-- served in the order of `queued_at`, a number one past the name's last when first placed.
-- The grant terms (owner token, lease in milliseconds, label) are those a release grants the
-- lock on to the first in line (release.sql); NULL: placed by an earlier version, which takes
-- its turn itself.
CREATE TABLE IF NOT EXISTS "{waiters}" (
    name           TEXT    NOT NULL,
    waiter         BLOB    NOT NULL,
    expires_at     INTEGER NOT NULL,
    queued_at      INTEGER NOT NULL DEFAULT 0,
    grant_owner    BLOB,
    grant_lease_ms INTEGER,
    grant_label    TEXT,
    PRIMARY KEY (name, waiter)
);

-- Semaphores and read-write locks: one row per name and kind, holding the claim state
-- (fencing counter, holders with leases, queue) as text, changed by compare-and-set on version.
CREATE TABLE IF NOT EXISTS "{claims}" (
    name    TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    state   BLOB    NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (name, kind)
);
