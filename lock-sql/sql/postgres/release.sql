-- $1 name, $2 owner token, $3 the table's notification channel.
-- End our live hold and hand the lock to the first live waiter in the same statement: when
-- that waiter's entry carries grant terms (acquire_first.sql, acquire.sql), the lock row
-- becomes its hold (its token, lease and label, the next fence, granted now by the database
-- clock) and its entry goes; otherwise the row is left free. Either way the notification,
-- sent when the statement commits, carries the lock name and, after a newline, that waiter's
-- entry id in hex, followed by a space and the fence when it was granted (the name alone when
-- no entry waits, which wakes any acquisition of the name that has not placed one yet). A
-- grant goes to the channel of the waiter's service alone, `distlock_` and the first 8 bytes
-- of its entry id in hex, so no other service's listener hears it; the rest go to the
-- table's channel.
-- The row that comes back (none when the hold was not ours) says in `waited` whether a waiter
-- was in line, and in `marked` whether one may still be (the row's `queued_until`, see
-- acquire.sql). With neither, release_alone.sql does the same for less.
-- An entry carrying our own token is none to grant: it is the entry of the acquisition that
-- holds (a refresh of it, sent before the release that granted it committed, put it back after
-- that release deleted it); it goes with the hold.
-- Row locks are taken in the order wait_leave.sql and acquire.sql take them: the lock row
-- first, then the first entry. An entry whose removal committed meanwhile is passed over for
-- the next, and one being removed is waited for, so a release never grants or wakes only an
-- acquisition that has left.
WITH mine AS (
    SELECT name FROM "{table}"
    WHERE name = $1 AND owner = $2 AND lease_end > now()
    FOR UPDATE
),
head AS (
    SELECT waiter, grant_owner, grant_lease_us, grant_label FROM "{waiters}"
    WHERE name = $1 AND expires_at > now() AND EXISTS (SELECT 1 FROM mine)
      AND grant_owner IS DISTINCT FROM $2
    ORDER BY queued_at, waiter LIMIT 1
    FOR UPDATE
),
own AS (
    DELETE FROM "{waiters}"
    WHERE name = $1 AND grant_owner = $2 AND EXISTS (SELECT 1 FROM mine)
),
next AS (
    SELECT h.waiter, h.grant_owner, h.grant_lease_us, h.grant_label
    FROM (SELECT 1) AS one LEFT JOIN head AS h ON true
),
released AS (
    UPDATE "{table}" AS held SET
        owner = next.grant_owner,
        fence = CASE WHEN next.grant_owner IS NULL THEN held.fence
                     ELSE GREATEST(held.fence + 1,
                                   CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT))
                END,
        lease_end = CASE WHEN next.grant_owner IS NULL THEN now()
                         ELSE clock_timestamp()
                              + CAST(next.grant_lease_us AS DOUBLE PRECISION) * INTERVAL '1 microsecond'
                    END,
        owner_label = CASE WHEN next.grant_owner IS NULL THEN held.owner_label
                           ELSE next.grant_label END,
        granted_at = CASE WHEN next.grant_owner IS NULL THEN held.granted_at
                          ELSE clock_timestamp() END
    FROM next
    WHERE held.name IN (SELECT name FROM mine)
    RETURNING held.name, held.fence, next.waiter, next.grant_owner,
              COALESCE(held.queued_until > now(), FALSE) AS marked
),
served AS (
    DELETE FROM "{waiters}"
    WHERE name = $1
      AND waiter IN (SELECT waiter FROM released WHERE grant_owner IS NOT NULL)
)
SELECT name, pg_notify(
    CASE WHEN grant_owner IS NULL THEN $3
         ELSE 'distlock_' || encode(substring(waiter FROM 1 FOR 8), 'hex') END,
    name || COALESCE(chr(10) || encode(waiter, 'hex')
        || CASE WHEN grant_owner IS NULL THEN '' ELSE ' ' || CAST(fence AS TEXT) END, '')
), waiter IS NOT NULL AS waited, marked FROM released
