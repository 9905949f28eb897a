-- $1 name, $2 fencing token, $3 notification channel.
-- End the live hold on the name if its fencing counter is the token (the row and counter
-- stay; a newer holder has a larger counter and is never touched), and wake the first live
-- waiter as release.sql does.
-- Entries carrying the ended hold's owner token (release.sql tells how one can come back) are
-- nobody waiting: they go, and are not the waiter woken.
WITH forced AS (
    SELECT owner FROM "{table}"
    WHERE name = $1 AND fence = $2 AND owner IS NOT NULL AND lease_end > now()
),
released AS (
    UPDATE "{table}" SET owner = NULL, lease_end = now()
    WHERE name = $1 AND fence = $2 AND owner IS NOT NULL AND lease_end > now()
    RETURNING name
),
lapsed AS (
    DELETE FROM "{waiters}"
    WHERE name = $1 AND EXISTS (SELECT 1 FROM released)
      AND grant_owner IN (SELECT owner FROM forced)
)
SELECT name, pg_notify($3, name || COALESCE(chr(10) || encode((
    SELECT w.waiter FROM "{waiters}" AS w
    WHERE w.name = $1 AND w.expires_at > now()
      AND NOT EXISTS (SELECT 1 FROM forced WHERE forced.owner = w.grant_owner)
    ORDER BY w.queued_at, w.waiter LIMIT 1 FOR SHARE
), 'hex'), '')) FROM released
