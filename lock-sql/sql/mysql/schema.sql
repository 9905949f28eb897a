-- Statements run in order, each ending with `;` at the end of a line. The lock table is
-- created with every column; tables made by earlier versions get the newer columns from
-- upgrade.sql.
CREATE TABLE IF NOT EXISTS `{table}` (
    name        VARBINARY(255) NOT NULL PRIMARY KEY,
    owner       BINARY(16)     NULL,
    fence       BIGINT         NOT NULL,
    lease_end   DATETIME(6)    NOT NULL,
    owner_label VARBINARY(255) NULL,
    granted_at  DATETIME(6)    NULL,
    -- Until when a waiter entry of the name may be live (see wait_mark.sql); NULL: none was
    -- ever placed.
    queued_until DATETIME(6)   NULL
) ENGINE = InnoDB;

-- Acquisitions waiting now: one entry each, refreshed while it waits, ignored once expired;
-- served in the order of `queued_at`, the time of the first entry (then of `waiter`).
-- `sleeper` is the id of the connection the acquisition parks while it waits (park.sql),
-- which a release interrupts to tell the first in line its turn came; NULL: none parked.
-- The grant terms (owner token, lease, label) are those a release grants the lock on to the
-- first in line (grant_head.sql); NULL: placed by an earlier version, which takes its turn
-- itself.
CREATE TABLE IF NOT EXISTS `{waiters}` (
    name           VARBINARY(255)  NOT NULL,
    waiter         BINARY(16)      NOT NULL,
    expires_at     DATETIME(6)     NOT NULL,
    queued_at      DATETIME(6)     NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    sleeper        BIGINT UNSIGNED NULL,
    grant_owner    BINARY(16)      NULL,
    grant_lease_us BIGINT          NULL,
    grant_label    VARBINARY(255)  NULL,
    PRIMARY KEY (name, waiter)
) ENGINE = InnoDB;

-- Semaphores and read-write locks: one row per name and kind, holding the claim state
-- (fencing counter, holders with leases, queue) as text, changed by compare-and-set on version.
CREATE TABLE IF NOT EXISTS `{claims}` (
    name    VARBINARY(255) NOT NULL,
    kind    VARBINARY(16)  NOT NULL,
    state   MEDIUMBLOB     NOT NULL,
    version BIGINT         NOT NULL,
    PRIMARY KEY (name, kind)
) ENGINE = InnoDB;
