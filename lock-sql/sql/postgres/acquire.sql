-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label, $5 the acquisition's
-- waiter entry id, $6 whether to place or refresh that entry when not granted, $7 the entry's
-- lifetime in microseconds.
-- Insert the row, or take over one that is free or whose lease ended by the database clock,
-- raising the fencing counter and recording the label and grant time; a held row is left
-- alone and `fence` comes back NULL.
-- Waiters are served in arrival order: the lock is not taken while a live waiter entry of the
-- name is ahead of this acquisition's (every live entry is ahead of an acquisition that has
-- none). A grant removes this acquisition's entry in the same statement; an acquisition that
-- will wait places or refreshes it (keeping its arrival time) in the same statement too.
-- The next token is one past the counter and never below the database clock in microseconds,
-- so tokens keep rising even when the counter went back with the data (a restore from an older
-- backup, a failover to an asynchronous replica that missed the last grants), as long as the
-- new server's clock is not behind the time of the lost grants.
-- The NOT EXISTS guards skip the upsert when the statement's snapshot already shows a live
-- holder or an earlier waiter, so waiters that find the lock held do not queue on its row
-- lock; the ON CONFLICT condition re-checks the latest row version, which is what makes the
-- grant atomic.
-- `remaining_us` bounds the wait: the live holder's remaining lease, else how long the first
-- waiter ahead keeps its entry unless it refreshes it.
WITH mine AS (
    SELECT queued_at, waiter FROM "{waiters}" WHERE name = $1 AND waiter = $5
),
ahead AS (
    SELECT w.expires_at FROM "{waiters}" AS w
    WHERE w.name = $1 AND w.waiter <> $5 AND w.expires_at > now()
      AND NOT EXISTS (
          SELECT 1 FROM mine WHERE (mine.queued_at, mine.waiter) < (w.queued_at, w.waiter)
      )
    ORDER BY w.queued_at, w.waiter
    LIMIT 1
),
attempt AS (
    INSERT INTO "{table}" AS held (name, owner, fence, lease_end, owner_label, granted_at)
    SELECT $1, $2, CAST(EXTRACT(EPOCH FROM now()) * 1000000 AS BIGINT),
           now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond', $4, now()
    WHERE NOT EXISTS (
        SELECT 1 FROM "{table}" AS live
        WHERE live.name = $1 AND live.owner IS NOT NULL AND live.lease_end > now()
    ) AND NOT EXISTS (SELECT 1 FROM ahead)
    ON CONFLICT (name) DO UPDATE
        SET owner = EXCLUDED.owner,
            fence = GREATEST(held.fence + 1, EXCLUDED.fence),
            lease_end = EXCLUDED.lease_end,
            owner_label = EXCLUDED.owner_label,
            granted_at = EXCLUDED.granted_at
        WHERE held.owner IS NULL OR held.lease_end <= now()
    RETURNING held.fence
),
served AS (
    DELETE FROM "{waiters}"
    WHERE name = $1 AND waiter = $5 AND EXISTS (SELECT 1 FROM attempt)
),
queued AS (
    INSERT INTO "{waiters}" (name, waiter, expires_at, queued_at)
    SELECT $1, $5, now() + CAST($7 AS DOUBLE PRECISION) * INTERVAL '1 microsecond', now()
    WHERE $6 AND NOT EXISTS (SELECT 1 FROM attempt)
    ON CONFLICT (name, waiter) DO UPDATE SET expires_at = EXCLUDED.expires_at
)
SELECT
    (SELECT fence FROM attempt) AS fence,
    COALESCE(
        (SELECT CAST(EXTRACT(EPOCH FROM lease_end - now()) * 1000000 AS BIGINT)
           FROM "{table}" WHERE name = $1 AND owner IS NOT NULL AND lease_end > now()),
        (SELECT CAST(EXTRACT(EPOCH FROM expires_at - now()) * 1000000 AS BIGINT) FROM ahead)
    ) AS remaining_us
