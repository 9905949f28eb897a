-- $1 name, $2 owner token, $3 notification channel.
-- Clear the owner (the row and its fencing counter stay) if the live hold is ours, and wake
-- waiters with a notification carrying the lock name, sent when the statement commits.
WITH released AS (
    UPDATE "{table}" SET owner = NULL, lease_end = now()
    WHERE name = $1 AND owner = $2 AND lease_end > now()
    RETURNING name
)
SELECT name, pg_notify($3, name) FROM released
