-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label.
-- acquire_free.sql for a lock row this service saw exist (distlock never deletes one): the
-- same grant and the same row back, by a plain `UPDATE` of the row, which the server runs for
-- less than the upsert's speculative insert and its conflict. The row is taken over when it
-- is free (or its lease ended by the database clock) and no waiter entry of the name can be
-- live (`queued_until`, see acquire_free.sql); the `WHERE` clause is checked again on the
-- newest row version when the `UPDATE` waited for the row lock, which makes the grant atomic.
-- The fence is one past the counter and never below the database clock in microseconds, as
-- acquire_first.sql's.
-- The row read beside it is the statement's snapshot of the lock row: `remaining_us` is the
-- holder's remaining lease when no fence came back (NULL: free, but marked for waiters), and
-- `present` is false when the row is gone (deleted by an administrator): the try is then sent
-- again as acquire_free.sql, which inserts it.
WITH taken AS (
    UPDATE "{table}" AS held
    SET owner = $2,
        fence = GREATEST(held.fence + 1, CAST(EXTRACT(EPOCH FROM now()) * 1000000 AS BIGINT)),
        lease_end = now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond',
        owner_label = $4,
        granted_at = now()
    WHERE held.name = $1
      AND (held.owner IS NULL OR held.lease_end <= now())
      AND (held.queued_until IS NULL OR held.queued_until <= now())
    RETURNING held.fence
)
SELECT
    (SELECT fence FROM taken) AS fence,
    CASE WHEN live.owner IS NOT NULL AND live.lease_end > now()
         THEN CAST(EXTRACT(EPOCH FROM live.lease_end - now()) * 1000000 AS BIGINT)
    END AS remaining_us,
    live.name IS NOT NULL AS present
FROM (SELECT 1) AS one
LEFT JOIN "{table}" AS live ON live.name = $1
