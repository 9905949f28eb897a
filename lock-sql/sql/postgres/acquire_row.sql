-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label.
-- acquire_free.sql for a lock row this service saw exist (distlock never deletes one): the
-- same grant and the same row back. The grant is take_row.sql's `UPDATE`, put in place of the
-- placeholder below when the statement is built, which the server runs for less than the
-- upsert's speculative insert and its conflict.
-- The row read beside it is the statement's snapshot of the lock row: `remaining_us` is the
-- holder's remaining lease when no fence came back (NULL: free, but marked for waiters), and
-- `present` is false when the row is gone (deleted by an administrator): the try is then sent
-- again as acquire_free.sql, which inserts it.
WITH taken AS (
{take_row}
)
SELECT
    (SELECT fence FROM taken) AS fence,
    CASE WHEN live.owner IS NOT NULL AND live.lease_end > now()
         THEN CAST(EXTRACT(EPOCH FROM live.lease_end - now()) * 1000000 AS BIGINT)
    END AS remaining_us,
    live.name IS NOT NULL AS present
FROM (SELECT 1) AS one
LEFT JOIN "{table}" AS live ON live.name = $1
