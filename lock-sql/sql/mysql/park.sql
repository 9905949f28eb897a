-- Binds: name, owner, name, waiter id, name, anchor, seconds. A waiting acquisition's
-- parked connection: waits for the given time while the lock is held by another or a live
-- entry is ahead of the acquisition's, and returns -1 at once when neither is so (its turn
-- came) or when a release granted the lock to its entry (grant_head.sql: `owner` holds it). It waits for the
-- user lock `anchor`, which its service holds on another connection (see the `anchor`
-- module), so the wait ends when its time runs out (0) or when a release whose first waiter
-- in line this is interrupts it (`KILL QUERY`, see grant_head.sql): the statement then
-- returns 1 or fails with "query execution was interrupted". It returns 2 when it got the
-- lock, which only happens once the anchor's connection has ended. The check and the wait
-- are one statement, so a release between them cannot go unnoticed: a release committed
-- before the statement began shows in its check, and one after it interrupts it. `SLEEP()`
-- would wait as well, but a `KILL QUERY` that reaches it just as its sleep ends may stall
-- for seconds.
SELECT /* distlock park */ CAST(IF(
    NOT EXISTS (SELECT 1 FROM `{table}` AS granted
                WHERE granted.name = ? AND granted.owner = ?
                  AND granted.lease_end > UTC_TIMESTAMP(6))
    AND (EXISTS (SELECT 1 FROM `{table}` AS held
                 WHERE held.name = ? AND held.owner IS NOT NULL
                   AND held.lease_end > UTC_TIMESTAMP(6))
         OR EXISTS (SELECT 1 FROM `{waiters}` AS w
                    JOIN `{waiters}` AS mine ON mine.name = w.name AND mine.waiter = ?
                    WHERE w.name = ? AND w.waiter <> mine.waiter
                      AND w.expires_at > UTC_TIMESTAMP(6)
                      AND (w.queued_at < mine.queued_at
                           OR (w.queued_at = mine.queued_at AND w.waiter < mine.waiter)))),
    COALESCE(GET_LOCK(?, ?) * 2, 1), -1) AS SIGNED) AS parked
