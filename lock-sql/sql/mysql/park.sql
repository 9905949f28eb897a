-- Binds: name, waiter id, name, seconds. A waiting acquisition's parked connection: sleeps
-- for the given time while the lock is held or a live entry is ahead of the acquisition's,
-- and returns -1 at once when neither is so (its turn came). A release whose first waiter
-- in line this is interrupts the sleep (`KILL QUERY`, see release.sql): the statement then
-- fails with "query execution was interrupted" (MariaDB) or returns 1 (MySQL). The check and
-- the sleep are one statement, so a release between them cannot go unnoticed: a release
-- committed before the statement began shows in its check, and one after it interrupts it.
SELECT /* distlock park */ CAST(IF(
    EXISTS (SELECT 1 FROM `{table}` AS held
            WHERE held.name = ? AND held.owner IS NOT NULL
              AND held.lease_end > UTC_TIMESTAMP(6))
    OR EXISTS (SELECT 1 FROM `{waiters}` AS w
               JOIN `{waiters}` AS mine ON mine.name = w.name AND mine.waiter = ?
               WHERE w.name = ? AND w.waiter <> mine.waiter
                 AND w.expires_at > UTC_TIMESTAMP(6)
                 AND (w.queued_at < mine.queued_at
                      OR (w.queued_at = mine.queued_at AND w.waiter < mine.waiter))),
    SLEEP(?), -1) AS SIGNED) AS parked
