-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label, $5 the acquisition's
-- waiter entry id, $6 whether to place or refresh that entry when not granted, $7 the entry's
-- lifetime in microseconds, $8 how far ahead to mark the lock row for waiters, in
-- microseconds.
-- Insert the row, or take over one that is free or whose lease ended by the database clock,
-- raising the fencing counter and recording the label and grant time; a held row is left
-- alone and `fence` comes back NULL.
-- Waiters are served in arrival order: the lock is not taken while a live waiter entry of the
-- name is ahead of this acquisition's (every live entry is ahead of an acquisition that has
-- none). A grant removes this acquisition's entry in the same statement; an acquisition that
-- will wait places or refreshes it (keeping its arrival time) in the same statement too, with
-- its grant terms ($2, $3, $4), on which a release may grant it the lock (release.sql).
-- A lock so granted may be found here before its notification arrives: a live hold by $2 is
-- this acquisition's, and comes back with its fence, its lease renewed from this statement.
-- The next token is one past the counter and never below the database clock in microseconds,
-- so tokens keep rising even when the counter went back with the data (a restore from an older
-- backup, a failover to an asynchronous replica that missed the last grants), as long as the
-- new server's clock is not behind the time of the lost grants.
-- The NOT EXISTS guards skip the upsert when the statement's snapshot already shows a live
-- holder or an earlier waiter, so waiters that find the lock held do not queue on its row
-- lock; the ON CONFLICT condition re-checks the latest row version, which is what makes the
-- grant atomic.
-- An entry carrying the lock row's owner token is nobody waiting: owner tokens name one
-- acquisition, and one that was granted waits no more (release.sql tells how such an entry can
-- come back). It is passed over here, and goes (`lapsed`) when this statement takes the lock
-- over from that owner's ended lease, so no later release grants the lock to it.
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
    WHERE (NOT EXISTS (
        SELECT 1 FROM "{table}" AS live
        WHERE live.name = $1 AND live.owner IS NOT NULL AND live.lease_end > now()
    ) AND NOT EXISTS (SELECT 1 FROM ahead)) OR EXISTS (
        SELECT 1 FROM "{table}" AS ours
        WHERE ours.name = $1 AND ours.owner = $2 AND ours.lease_end > now()
    )
    ON CONFLICT (name) DO UPDATE
        SET owner = EXCLUDED.owner,
            fence = CASE WHEN held.owner = EXCLUDED.owner AND held.lease_end > now()
                         THEN held.fence ELSE GREATEST(held.fence + 1, EXCLUDED.fence) END,
            lease_end = EXCLUDED.lease_end,
            owner_label = EXCLUDED.owner_label,
            granted_at = CASE WHEN held.owner = EXCLUDED.owner AND held.lease_end > now()
                              THEN held.granted_at ELSE EXCLUDED.granted_at END
        WHERE held.owner IS NULL OR held.lease_end <= now() OR held.owner = EXCLUDED.owner
    RETURNING held.fence
),
served AS (
    DELETE FROM "{waiters}"
    WHERE name = $1 AND waiter = $5 AND EXISTS (SELECT 1 FROM attempt)
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
