-- Binds: owner, lease_us, label, name, owner.
-- acquire.sql for a row this service has seen: an UPDATE, with no insert to try first. The
-- row is taken over exactly when acquire.sql would take it over (free or its lease ended by
-- the database clock, and no waiter entry can be live; or it is ours), with the same fence,
-- label and grant time. As release.sql keeps the owner token, a takeover by the same service
-- leaves the row's size unchanged, and InnoDB changes it in place.
-- A refusal matches no row: the WHERE clause sets the insert id as acquire.sql does, to 2^63
-- plus the holder's remaining lease in microseconds (plus 0 when the lock is free but a
-- waiter entry may be live). A missing row matches nothing and sets no insert id, which then
-- reads 0: acquire.sql inserts it.
-- Each assignment reads only the column it sets, so MySQL's left-to-right order and
-- MariaDB's SIMULTANEOUS_ASSIGNMENT agree.
UPDATE `{table}`
SET fence = LAST_INSERT_ID(GREATEST(fence + 1, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED))),
    owner = ?,
    lease_end = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
    owner_label = ?,
    granted_at = UTC_TIMESTAMP(6)
WHERE name = ?
  AND IF(owner = ? OR ((owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))
                       AND (queued_until IS NULL OR queued_until <= UTC_TIMESTAMP(6))),
         TRUE,
         LAST_INSERT_ID(9223372036854775808 + GREATEST(0,
                        TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_end))) = 0)
