-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label.
-- Insert the row, or take over one that is free or whose lease ended by the database clock,
-- raising the fencing counter and recording the label and grant time; a held row is left
-- alone and `fence` comes back NULL.
-- The next token is one past the counter and never below the database clock in microseconds,
-- so tokens keep rising even when the counter went back with the data (a restore from an older
-- backup, a failover to an asynchronous replica that missed the last grants), as long as the
-- new server's clock is not behind the time of the lost grants.
-- The NOT EXISTS guard skips the upsert when the statement's snapshot already shows a live
-- holder, so waiters that find the lock held do not queue on its row lock; the ON CONFLICT
-- condition re-checks the latest row version, which is what makes the grant atomic.
-- `remaining_us` reads the holder's lease from the snapshot, to bound the wait.
WITH attempt AS (
    INSERT INTO "{table}" AS held (name, owner, fence, lease_end, owner_label, granted_at)
    SELECT $1, $2, CAST(EXTRACT(EPOCH FROM now()) * 1000000 AS BIGINT),
           now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond', $4, now()
    WHERE NOT EXISTS (
        SELECT 1 FROM "{table}" AS live
        WHERE live.name = $1 AND live.owner IS NOT NULL AND live.lease_end > now()
    )
    ON CONFLICT (name) DO UPDATE
        SET owner = EXCLUDED.owner,
            fence = GREATEST(held.fence + 1, EXCLUDED.fence),
            lease_end = EXCLUDED.lease_end,
            owner_label = EXCLUDED.owner_label,
            granted_at = EXCLUDED.granted_at
        WHERE held.owner IS NULL OR held.lease_end <= now()
    RETURNING held.fence
)
SELECT
    (SELECT fence FROM attempt) AS fence,
    (SELECT CAST(EXTRACT(EPOCH FROM lease_end - now()) * 1000000 AS BIGINT)
       FROM "{table}" WHERE name = $1 AND owner IS NOT NULL) AS remaining_us
