-- ?1 name, ?2 waiter id: where a waiting acquisition stands, read only: the live holder's
-- remaining lease in milliseconds (NULL when the lock is free), how many live entries are
-- ahead of the acquisition's entry, and whether that entry is still there (it is gone when
-- it expired and was purged; then it is placed again, at the back).
SELECT
    (SELECT lease_end - {now} FROM "{table}"
     WHERE name = ?1 AND owner IS NOT NULL AND lease_end > {now}) AS remaining_ms,
    (SELECT COUNT(*) FROM "{waiters}" AS w
     JOIN "{waiters}" AS mine ON mine.name = w.name AND mine.waiter = ?2
     WHERE w.name = ?1 AND w.waiter <> mine.waiter AND w.expires_at > {now}
       AND (w.queued_at < mine.queued_at
            OR (w.queued_at = mine.queued_at AND w.waiter < mine.waiter))) AS ahead,
    EXISTS (SELECT 1 FROM "{waiters}" WHERE name = ?1 AND waiter = ?2) AS queued
