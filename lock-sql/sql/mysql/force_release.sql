-- Binds: name, name, fencing token. End the live hold on the name if its fencing counter is
-- the token (the row and counter stay; a newer holder has a larger counter and is never
-- touched). The connection reports matched rows (CLIENT_FOUND_ROWS): 1 means released. The
-- insert id reports the first waiter's parked connection, as release.sql's does (read
-- first, as there).
UPDATE `{table}` SET owner = NULL, lease_end = UTC_TIMESTAMP(6),
    queued_until = IF(queued_until > UTC_TIMESTAMP(6)
                      AND LAST_INSERT_ID(COALESCE((
                          SELECT w.sleeper FROM `{waiters}` AS w
                          WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6)
                          ORDER BY w.queued_at, w.waiter LIMIT 1), 0)) >= 0,
                      queued_until, queued_until)
WHERE name = ? AND fence = ? AND owner IS NOT NULL AND lease_end > UTC_TIMESTAMP(6)
