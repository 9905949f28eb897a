-- $1 name, $2 waiter id, $3 notification channel: the acquisition no longer waits. Expired
-- entries of the same name (left by processes that died waiting) go too.
-- A release may have woken this entry alone just before; so when the lock is free, the first
-- waiter left is woken as a release would. The lock row is read with a lock before the entry
-- is removed (the order release.sql takes them in): a release in flight is waited for and
-- then seen, and a release that comes after the removal passes this entry over.
-- An entry carrying the lock row's owner token is nobody waiting (acquire.sql), so not woken.
-- When no waiter is left in sight, the name alone is sent, which wakes every acquisition of
-- the name: one that found this entry ahead may have placed its own after this statement's
-- snapshot, where the first waiter cannot be seen, and would otherwise wait for nothing.
WITH lock_row AS (
    SELECT owner, lease_end FROM "{table}" WHERE name = $1 FOR SHARE
),
gone AS (
    DELETE FROM "{waiters}"
    WHERE name = $1 AND (waiter = $2 OR expires_at <= now())
      AND (SELECT count(*) FROM lock_row) >= 0
)
SELECT pg_notify($3, $1 || COALESCE(chr(10) || encode((
    SELECT waiter FROM "{waiters}"
    WHERE name = $1 AND waiter <> $2 AND expires_at > now()
      AND NOT EXISTS (SELECT 1 FROM lock_row WHERE lock_row.owner = grant_owner)
    ORDER BY queued_at, waiter LIMIT 1
), 'hex'), ''))
WHERE NOT EXISTS (SELECT 1 FROM lock_row WHERE owner IS NOT NULL AND lease_end > now())
