-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label.
-- The first try of an acquisition, on a name this service has not seen marked for waiters:
-- take the lock if it is free (or its lease ended by the database clock) and no waiter
-- entry of the name can be live, which `queued_until` tells without reading the waiters
-- table (acquire_first.sql and acquire.sql move it past every entry they place or refresh).
-- The fence, label and grant time are those acquire_first.sql gives. As there, the upsert is
-- skipped when the statement's snapshot already shows the lock held or marked, so a try that
-- finds it so does not queue on the row lock `ON CONFLICT DO UPDATE` takes; the `ON CONFLICT`
-- condition re-checks the newest row version, which is what makes the grant atomic.
-- No fence comes back when the lock is held or may have waiters; `remaining_us` is then the
-- holder's remaining lease (NULL: free, but marked for waiters), and the try goes on with
-- acquire_first.sql, which reads the line and places the acquisition's entry.
WITH attempt AS (
    INSERT INTO "{table}" AS held (name, owner, fence, lease_end, owner_label, granted_at)
    SELECT $1, $2, CAST(EXTRACT(EPOCH FROM now()) * 1000000 AS BIGINT),
           now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond', $4, now()
    WHERE NOT EXISTS (
        SELECT 1 FROM "{table}" AS live
        WHERE live.name = $1
          AND ((live.owner IS NOT NULL AND live.lease_end > now()) OR live.queued_until > now())
    )
    ON CONFLICT (name) DO UPDATE
        SET owner = EXCLUDED.owner,
            fence = GREATEST(held.fence + 1, EXCLUDED.fence),
            lease_end = EXCLUDED.lease_end,
            owner_label = EXCLUDED.owner_label,
            granted_at = EXCLUDED.granted_at
        WHERE (held.owner IS NULL OR held.lease_end <= now())
          AND (held.queued_until IS NULL OR held.queued_until <= now())
    RETURNING held.fence
)
SELECT
    (SELECT fence FROM attempt) AS fence,
    (SELECT CAST(EXTRACT(EPOCH FROM lease_end - now()) * 1000000 AS BIGINT)
       FROM "{table}" WHERE name = $1 AND owner IS NOT NULL AND lease_end > now()) AS remaining_us
