-- Binds: name, fencing token. End the live hold on the name if its fencing counter is the
-- token (the row and counter stay; a newer holder has a larger counter and is never
-- touched). The connection reports matched rows (CLIENT_FOUND_ROWS): 1 means released. The
-- insert id is 1 while the row says a waiter entry may be live, as release.sql's is: the
-- releaser then grants the lock to the first in line (grant_head.sql).
UPDATE `{table}` SET owner = NULL, lease_end = UTC_TIMESTAMP(6),
    queued_until = IF(queued_until > UTC_TIMESTAMP(6),
                      IF(LAST_INSERT_ID(1) > 0, queued_until, queued_until), queued_until)
WHERE name = ? AND fence = ? AND owner IS NOT NULL AND lease_end > UTC_TIMESTAMP(6)
