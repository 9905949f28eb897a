-- $1 name, $2 fencing token, $3 notification channel.
-- End the live hold on the name if its fencing counter is the token (the row and counter
-- stay; a newer holder has a larger counter and is never touched), and wake the first live
-- waiter as release.sql does.
WITH released AS (
    UPDATE "{table}" SET owner = NULL, lease_end = now()
    WHERE name = $1 AND fence = $2 AND owner IS NOT NULL AND lease_end > now()
    RETURNING name
)
SELECT name, pg_notify($3, name || COALESCE(chr(10) || encode((
    SELECT waiter FROM "{waiters}" WHERE name = $1 AND expires_at > now()
    ORDER BY queued_at, waiter LIMIT 1 FOR SHARE
), 'hex'), '')) FROM released
