-- Binds: name, owner (NULL after a forced release), name. Sent by a release that found a
-- waiter entry may be live (release.sql), on its connection, after it committed: while the
-- lock is still free, grants it to the first live entry in line on the terms the entry
-- carries (wait_register.sql). The entry stays until its waiter, taking the grant up, removes
-- it (as after any grant to a waiter); an entry of the releasing owner (`owner`), which it
-- left right after its grant, is passed over. The new fence is one past the counter and never
-- below the database clock in microseconds, as acquire.sql's. An entry without terms (placed
-- by an earlier version, which takes its turn itself) is granted nothing.
-- The insert id names the connection the first entry parks (park.sql), which the releaser
-- then interrupts; it is 0 when that waiter parks none, when no entry is live, or when the
-- lock was taken meanwhile (the join then found no row).
-- Each assignment reads only the column it sets, so MySQL's left-to-right order and
-- MariaDB's SIMULTANEOUS_ASSIGNMENT agree; the test for terms is in each, not in the WHERE
-- clause, so that the insert id names an entry without terms too.
-- The waiters table is only read, as acquire_in_line.sql reads it, before the lock row is
-- locked: writing the entry here too made the two deadlock under contention.
-- A statement of its own, not part of release.sql: reading the waiters table there cost the
-- server more than the rest of the release, on every release of a lock never waited for.
UPDATE `{table}` AS held
JOIN (SELECT w.sleeper, w.grant_owner, w.grant_lease_us, w.grant_label
      FROM `{waiters}` AS w
      WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6)
        AND (w.grant_owner IS NULL OR NOT (w.grant_owner <=> ?))
      ORDER BY w.queued_at, w.waiter LIMIT 1) AS head
SET held.fence = IF(head.grant_owner IS NULL, held.fence,
                    GREATEST(held.fence + 1, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED))),
    held.owner = IF(head.grant_owner IS NULL, held.owner, head.grant_owner),
    held.lease_end = IF(head.grant_owner IS NULL, held.lease_end,
                        UTC_TIMESTAMP(6) + INTERVAL head.grant_lease_us MICROSECOND),
    held.owner_label = IF(head.grant_owner IS NULL, held.owner_label, head.grant_label),
    held.granted_at = IF(head.grant_owner IS NULL, held.granted_at, UTC_TIMESTAMP(6))
WHERE held.name = ? AND (held.owner IS NULL OR held.lease_end <= UTC_TIMESTAMP(6))
  AND LAST_INSERT_ID(COALESCE(head.sleeper, 0)) >= 0
