-- Binds: name, owner, name, owner. A release by a service that found a line at this name
-- (its acquisitions found the lock held): ends our live hold and, in the same statement,
-- grants the lock to the first live entry in line, on the terms the entry carries, as
-- release.sql followed by grant_head.sql would, but with one statement and one commit. With
-- nobody in line it frees the row as release.sql does (lease end in the distant past, owner
-- token kept). An entry of the releasing owner is passed over; an entry without terms (placed
-- by an earlier version) is granted nothing and the row is freed, and its waiter, rung, takes
-- its turn itself. The waiters table is only read, before the lock row is locked, as in
-- grant_head.sql. The connection reports matched rows (CLIENT_FOUND_ROWS): 1 means released.
-- The insert id is 0 when nobody is in line, and otherwise one more than the id of the
-- connection the first entry parks (park.sql), which the releaser interrupts; 1 when it
-- parks none.
-- Each assignment reads only the column it sets, so MySQL's left-to-right order and
-- MariaDB's SIMULTANEOUS_ASSIGNMENT agree.
UPDATE `{table}` AS held
LEFT JOIN (SELECT w.waiter, w.sleeper, w.grant_owner, w.grant_lease_us, w.grant_label
           FROM `{waiters}` AS w
           WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6)
             AND (w.grant_owner IS NULL OR NOT (w.grant_owner <=> ?))
           ORDER BY w.queued_at, w.waiter LIMIT 1) AS head ON TRUE
SET held.fence = IF(head.grant_owner IS NULL, held.fence,
                    GREATEST(held.fence + 1, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED))),
    held.owner = IF(head.grant_owner IS NULL, held.owner, head.grant_owner),
    held.lease_end = IF(head.grant_owner IS NULL, TIMESTAMP '1970-01-01 00:00:00',
                        UTC_TIMESTAMP(6) + INTERVAL head.grant_lease_us MICROSECOND),
    held.owner_label = IF(head.grant_owner IS NULL, held.owner_label, head.grant_label),
    held.granted_at = IF(head.grant_owner IS NULL, held.granted_at, UTC_TIMESTAMP(6))
WHERE held.name = ? AND held.owner = ? AND held.lease_end > UTC_TIMESTAMP(6)
  AND LAST_INSERT_ID(IF(head.waiter IS NULL, 0, COALESCE(head.sleeper, 0) + 1)) >= 0
