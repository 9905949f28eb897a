-- Binds: name, name, owner. End the live hold if it is ours, by moving its lease end to the
-- distant past. The row keeps its fencing counter and the owner token: a token of the same
-- size stays in place of ours, so that acquire_row.sql changes the row in place; every
-- statement takes a hold as live only while its lease runs, so the token alone holds nothing,
-- and the past lease end keeps it so even if the database clock steps back. The connection
-- reports matched rows (CLIENT_FOUND_ROWS): 1 means released.
-- While the row says a waiter entry may be live (wait_mark.sql), the insert id reports the
-- parked connection of the first live entry in line (park.sql), which the releaser then
-- interrupts so that waiter reads its turn at once; 0 when none parks (no waiter, or one that
-- parks nothing). The subquery names the lock by the bound name, not by the updated row: the
-- server reads the waiters table (with shared locks, to the end of the statement) before it
-- locks the lock row, the order acquire_in_line.sql takes them in. The shared locks also
-- order a release and an entry being placed:
-- an entry placed after the read waits for the release to commit, so its park sees the lock
-- free. The process list is not consulted here: a reference to it costs every release a
-- quarter of a millisecond.
UPDATE `{table}` SET lease_end = '1970-01-01 00:00:00',
    queued_until = IF(queued_until > UTC_TIMESTAMP(6)
                      AND LAST_INSERT_ID(COALESCE((
                          SELECT w.sleeper FROM `{waiters}` AS w
                          WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6)
                          ORDER BY w.queued_at, w.waiter LIMIT 1), 0)) >= 0,
                      queued_until, queued_until)
WHERE name = ? AND owner = ? AND lease_end > UTC_TIMESTAMP(6)
