-- Binds: name, owner. End the live hold if it is ours, by moving its lease end to the distant
-- past. The row keeps its fencing counter and the owner token: a token of the same size stays
-- in place of ours, so that acquire_row.sql changes the row in place; every statement takes a
-- hold as live only while its lease runs, so the token alone holds nothing, and the past lease
-- end keeps it so even if the database clock steps back. The connection reports matched rows
-- (CLIENT_FOUND_ROWS): 1 means released.
-- The insert id is 1 while the row says a waiter entry may be live (wait_mark.sql), and 0
-- otherwise: then the releaser grants the lock to the first entry in line (grant_head.sql)
-- and interrupts its parked connection. The test is an `IF`, not an `AND`: `NULL AND x`
-- evaluates `x`, and a row never marked has a NULL `queued_until`. The waiters table is read
-- by that second statement, after this one committed, and not here: a subquery here cost the
-- server more than the rest of the statement on every release of a lock never waited for,
-- which is most releases.
UPDATE `{table}` SET lease_end = '1970-01-01 00:00:00',
    queued_until = IF(queued_until > UTC_TIMESTAMP(6),
                      IF(LAST_INSERT_ID(1) > 0, queued_until, queued_until), queued_until)
WHERE name = ? AND owner = ? AND lease_end > UTC_TIMESTAMP(6)
