-- Binds: name, owner, lease_us, label, owner, owner, owner, lease_us, owner, label, owner.
-- Insert the row, or take over one that is free or whose lease ended by the database clock
-- (UTC_TIMESTAMP is fixed for the whole statement), raising the fencing counter: one past it,
-- and never below the database clock in microseconds, so tokens keep rising even when the
-- counter went back with the data (a restore, a failover to a replica that missed grants).
-- A takeover also records the owner label and the grant time.
-- Waiters are served in arrival order, without reading the waiters table here: a free row
-- is taken only while `queued_until` says no waiter entry can be live (wait_mark.sql moves
-- it before any entry is placed or refreshed), else acquire_in_line.sql decides. A missing
-- row has no waiters, as an entry's row is marked before the entry is placed.
-- MySQL evaluates these assignments left to right, each seeing the columns already assigned;
-- MariaDB's SIMULTANEOUS_ASSIGNMENT mode sees the old row instead. The test for the columns
-- after `owner` is true in both cases exactly when `owner` was taken over: it now holds our
-- fresh random token, or the old row was free and unmarked.
-- The outcome comes back in the OK packet's insert id, set by LAST_INSERT_ID(expr), so that
-- no read follows: the new fence when granted (a signed counter: below 2^63), or 2^63 plus
-- the holder's remaining lease in microseconds when refused (plus 0 when the lock is free
-- but a waiter entry may be live).
INSERT INTO `{table}` (name, owner, fence, lease_end, owner_label, granted_at)
VALUES (?, ?, LAST_INSERT_ID(CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)),
        UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?, UTC_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE
    owner = IF((owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))
               AND (queued_until IS NULL OR queued_until <= UTC_TIMESTAMP(6)), ?, owner),
    fence = IF(owner = ? OR ((owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))
                             AND (queued_until IS NULL OR queued_until <= UTC_TIMESTAMP(6))),
               LAST_INSERT_ID(GREATEST(fence + 1, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED))),
               IF(LAST_INSERT_ID(9223372036854775808 + GREATEST(0,
                                 TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_end))) > 0,
                  fence, fence)),
    lease_end = IF(owner = ? OR ((owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))
                                 AND (queued_until IS NULL OR queued_until <= UTC_TIMESTAMP(6))),
                   UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, lease_end),
    owner_label = IF(owner = ? OR ((owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))
                                   AND (queued_until IS NULL OR queued_until <= UTC_TIMESTAMP(6))),
                     ?, owner_label),
    granted_at = IF(owner = ? OR ((owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))
                                  AND (queued_until IS NULL OR queued_until <= UTC_TIMESTAMP(6))),
                    UTC_TIMESTAMP(6), granted_at)
