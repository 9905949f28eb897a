-- $1 name, $2 owner token, $3 lease in microseconds.
-- Insert the row, or take over one that is free or whose lease ended by the database clock,
-- incrementing the fencing counter; a held row is left alone and `fence` comes back NULL.
-- `remaining_us` reads the holder's lease from the statement's snapshot, to bound the wait.
WITH attempt AS (
    INSERT INTO "{table}" AS held (name, owner, fence, lease_end)
    VALUES ($1, $2, 1, now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond')
    ON CONFLICT (name) DO UPDATE
        SET owner = EXCLUDED.owner,
            fence = held.fence + 1,
            lease_end = EXCLUDED.lease_end
        WHERE held.owner IS NULL OR held.lease_end <= now()
    RETURNING held.fence
)
SELECT
    (SELECT fence FROM attempt) AS fence,
    (SELECT CAST(EXTRACT(EPOCH FROM lease_end - now()) * 1000000 AS BIGINT)
       FROM "{table}" WHERE name = $1) AS remaining_us
