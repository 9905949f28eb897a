-- $1 name, $2 owner token, $3 notification channel.
-- Clear the owner (the row and its fencing counter stay) if the live hold is ours, and wake
-- the first live waiter alone: the notification, sent when the statement commits, carries
-- the lock name and, after a newline, that waiter's entry id in hex (the name alone when no
-- entry waits, which wakes any acquisition of the name that has not placed one yet).
-- The first waiter is read with a lock, after the lock row's: an entry whose removal
-- (wait_leave.sql) committed meanwhile is passed over for the next, and one being removed is
-- waited for, so a release never wakes only an acquisition that has left.
WITH released AS (
    UPDATE "{table}" SET owner = NULL, lease_end = now()
    WHERE name = $1 AND owner = $2 AND lease_end > now()
    RETURNING name
)
SELECT name, pg_notify($3, name || COALESCE(chr(10) || encode((
    SELECT waiter FROM "{waiters}" WHERE name = $1 AND expires_at > now()
    ORDER BY queued_at, waiter LIMIT 1 FOR SHARE
), 'hex'), '')) FROM released
