-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label, $5 the acquisition's
-- waiter entry id, $6 whether to place that entry when not granted, $7 the entry's lifetime
-- in microseconds, $8 how far ahead to mark the lock row for waiters, in microseconds.
-- The first try of an acquisition, which has no waiter entry yet: acquire.sql without the
-- entry's upkeep (no entry to read, remove or refresh), so a free lock nobody waits for costs
-- the lock row's upsert and one index probe of the waiters table. Every live waiter entry of
-- the name is ahead of this acquisition, but one carrying the lock row's owner token, which is
-- nobody waiting and goes when the lock is taken over from that owner (as in acquire.sql). A
-- try that finds the lock held and will wait places its entry in the same statement, with its
-- grant terms.
WITH ahead AS (
    SELECT w.expires_at FROM "{waiters}" AS w
    WHERE w.name = $1 AND w.expires_at > now()
      AND NOT EXISTS (
          SELECT 1 FROM "{table}" AS granted
          WHERE granted.name = $1 AND granted.owner = w.grant_owner
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
lapsed AS (
    -- The lock row is read twice, both times as it was before this statement: the EXISTS
    -- is a one-time gate, false unless a takeover found the row's lease ended unreleased,
    -- so taking a released lock never reads the owner nor searches the waiters.
    DELETE FROM "{waiters}"
    WHERE name = $1 AND EXISTS (SELECT 1 FROM attempt)
      AND EXISTS (
          SELECT 1 FROM "{table}" WHERE name = $1 AND owner IS NOT NULL AND lease_end <= now()
      )
      AND grant_owner = (SELECT owner FROM "{table}" WHERE name = $1)
),
queued AS (
    INSERT INTO "{waiters}"
        (name, waiter, expires_at, queued_at, grant_owner, grant_lease_us, grant_label)
    SELECT $1, $5, now() + CAST($7 AS DOUBLE PRECISION) * INTERVAL '1 microsecond', now(),
           $2, $3, $4
    WHERE $6 AND NOT EXISTS (SELECT 1 FROM attempt)
    ON CONFLICT (name, waiter) DO UPDATE
        SET expires_at = EXCLUDED.expires_at,
            grant_owner = EXCLUDED.grant_owner,
            grant_lease_us = EXCLUDED.grant_lease_us,
            grant_label = EXCLUDED.grant_label
),
marked AS (
    -- An entry placed or refreshed here is covered by the lock row's mark: `queued_until`
    -- moves $8 ahead whenever it would end within the entry's lifetime, so the statements
    -- that skip the waiters table (acquire_free.sql, release_alone.sql) see a live entry in
    -- it. It only ever moves later. Marking takes the row lock: a release in flight is waited
    -- for, and what it left is returned (`free`), since this statement's snapshot predates it
    -- and a release that ran first could not see this entry; a release after it sees the mark.
    UPDATE "{table}"
    SET queued_until = now() + CAST($8 AS DOUBLE PRECISION) * INTERVAL '1 microsecond'
    WHERE name = $1 AND $6 AND NOT EXISTS (SELECT 1 FROM attempt)
      AND (queued_until IS NULL
           OR queued_until < now() + CAST($7 AS DOUBLE PRECISION) * INTERVAL '1 microsecond')
    RETURNING owner IS NULL OR lease_end <= now() AS free
)
SELECT
    (SELECT fence FROM attempt) AS fence,
    CASE WHEN (SELECT free FROM marked) THEN 0 ELSE COALESCE(
        (SELECT CAST(EXTRACT(EPOCH FROM lease_end - now()) * 1000000 AS BIGINT)
           FROM "{table}" WHERE name = $1 AND owner IS NOT NULL AND lease_end > now()),
        (SELECT CAST(EXTRACT(EPOCH FROM expires_at - now()) * 1000000 AS BIGINT) FROM ahead)
    ) END AS remaining_us,
    EXISTS (SELECT 1 FROM marked) OR COALESCE(
        (SELECT queued_until > now() FROM "{table}" WHERE name = $1), FALSE
    ) AS marked
