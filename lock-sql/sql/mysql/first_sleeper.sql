-- Binds: name. After a release that found a waiter entry may be live (release.sql): the
-- parked connection (park.sql) of the first live entry in line, NULL when that waiter parks
-- none, and no row when no entry is live. A consistent read, taking no lock, sent after the
-- release committed: an entry placed after this read began parks, if at all, after the release,
-- so its park's own check finds the lock free; one placed before is seen here. Either way the
-- first waiter learns its turn came without waiting out its park.
SELECT w.sleeper FROM `{waiters}` AS w
WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6)
ORDER BY w.queued_at, w.waiter LIMIT 1
