-- ?1 name, ?2 waiter id, ?3 owner token: where a waiting acquisition stands, read only: the
-- live holder's remaining lease in milliseconds (NULL when the lock is free), how many live
-- entries are ahead of the acquisition's entry, and whether that entry is still there (it is
-- gone when it expired and was purged; then it is placed again, at the back). A lock a
-- release granted to the acquisition (release.sql: `?3` holds it) reads as free with nobody
-- ahead and the entry there: its acquire statement takes the grant up.
SELECT
    IIF(granted.mine, NULL,
        (SELECT lease_end - {now} FROM "{table}"
         WHERE name = ?1 AND owner IS NOT NULL AND lease_end > {now})) AS remaining_ms,
    IIF(granted.mine, 0,
        (SELECT COUNT(*) FROM "{waiters}" AS w
         JOIN "{waiters}" AS mine ON mine.name = w.name AND mine.waiter = ?2
         WHERE w.name = ?1 AND w.waiter <> mine.waiter AND w.expires_at > {now}
           AND (w.queued_at < mine.queued_at
                OR (w.queued_at = mine.queued_at AND w.waiter < mine.waiter)))) AS ahead,
    granted.mine OR EXISTS (SELECT 1 FROM "{waiters}" WHERE name = ?1 AND waiter = ?2) AS queued
FROM (SELECT EXISTS (SELECT 1 FROM "{table}"
                     WHERE name = ?1 AND owner = ?3 AND lease_end > {now}) AS mine) AS granted
