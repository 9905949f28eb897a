-- Binds: name, owner, lease_us, label, waiter, name, owner, owner, owner, lease_us, owner,
-- label, owner.
-- acquire.sql, reading the line: sent when the lock row says a waiter entry may be live
-- (see wait_mark.sql), or by a waiting acquisition whose turn came. The row is taken over
-- as acquire.sql does, but a free row only when no live waiter entry of the name is ahead of
-- this acquisition's entry (`turn.clear`; every live entry is ahead of an acquisition that
-- placed none); a missing row is then inserted free.
-- MySQL evaluates these assignments left to right, each seeing the columns already assigned;
-- MariaDB's SIMULTANEOUS_ASSIGNMENT mode sees the old row instead. The test for the columns
-- after `owner` is true in both cases exactly when `owner` was taken over: the old row was
-- free and it was this acquisition's turn, or `owner` now holds our fresh random token.
-- The outcome comes back in the insert id as acquire.sql's does. The SELECT row is
-- evaluated before the duplicate key is found, so on an existing row the update's call
-- comes last.
INSERT INTO `{table}` (name, owner, fence, lease_end, owner_label, granted_at)
SELECT ?, IF(turn.clear, ?, NULL),
       IF(turn.clear, LAST_INSERT_ID(CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)),
          IF(LAST_INSERT_ID(9223372036854775808) > 0,
             CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED), 0)),
       IF(turn.clear, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6)),
       IF(turn.clear, ?, NULL), IF(turn.clear, UTC_TIMESTAMP(6), NULL)
FROM (
    SELECT NOT EXISTS (
        SELECT 1 FROM `{waiters}` AS w
        LEFT JOIN `{waiters}` AS mine ON mine.name = w.name AND mine.waiter = ?
        WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6)
          AND (mine.waiter IS NULL
               OR w.queued_at < mine.queued_at
               OR (w.queued_at = mine.queued_at AND w.waiter < mine.waiter))
    ) AS clear
) AS turn
ON DUPLICATE KEY UPDATE
    owner = IF(turn.clear AND (owner IS NULL OR lease_end <= UTC_TIMESTAMP(6)), ?, owner),
    fence = IF((turn.clear AND (owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))) OR owner = ?,
               LAST_INSERT_ID(GREATEST(fence + 1, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED))),
               IF(LAST_INSERT_ID(9223372036854775808 + GREATEST(0,
                                 TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_end))) > 0,
                  fence, fence)),
    lease_end = IF((turn.clear AND (owner IS NULL OR lease_end <= UTC_TIMESTAMP(6))) OR owner = ?,
                   UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, lease_end),
    owner_label = IF((turn.clear AND (owner IS NULL OR lease_end <= UTC_TIMESTAMP(6)))
                     OR owner = ?, ?, owner_label),
    granted_at = IF((turn.clear AND (owner IS NULL OR lease_end <= UTC_TIMESTAMP(6)))
                    OR owner = ?, UTC_TIMESTAMP(6), granted_at)
