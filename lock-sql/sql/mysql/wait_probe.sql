-- Binds: name, waiter id, name, name, waiter id, name, owner. Where a waiting acquisition
-- stands, read without taking a lock, so that waiters polling do not queue on the lock row:
-- the live holder's remaining lease in microseconds (NULL when the lock is free), how many
-- live entries are ahead of the acquisition's entry, and whether that entry is still there
-- (it is gone when it expired and was purged; then it is placed again, at the back). A lock
-- a release granted to the acquisition (grant_head.sql: `owner` holds it) reads as free with
-- nobody ahead and the entry there (even if it expired meanwhile and was purged): its acquire
-- statement takes the grant up.
SELECT
    IF(granted.mine, NULL,
       (SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), held.lease_end) FROM `{table}` AS held
        WHERE held.name = ? AND held.owner IS NOT NULL AND held.lease_end > UTC_TIMESTAMP(6)))
        AS remaining_us,
    IF(granted.mine, 0,
       (SELECT COUNT(*) FROM `{waiters}` AS w
        JOIN `{waiters}` AS mine ON mine.name = w.name AND mine.waiter = ?
        WHERE w.name = ? AND w.waiter <> mine.waiter AND w.expires_at > UTC_TIMESTAMP(6)
          AND (w.queued_at < mine.queued_at
               OR (w.queued_at = mine.queued_at AND w.waiter < mine.waiter)))) AS ahead,
    CAST(granted.mine OR EXISTS (SELECT 1 FROM `{waiters}` WHERE name = ? AND waiter = ?)
         AS SIGNED) AS queued
FROM (SELECT EXISTS (SELECT 1 FROM `{table}` AS held
                     WHERE held.name = ? AND held.owner = ?
                       AND held.lease_end > UTC_TIMESTAMP(6)) AS mine) AS granted
