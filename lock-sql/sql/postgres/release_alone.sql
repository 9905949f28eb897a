-- $1 name, $2 owner token.
-- End our live hold while no waiter entry of the name can be live: the lock row's
-- `queued_until` has passed (every acquisition that places or refreshes an entry moves it past
-- the entry's expiry first, in the same statement: acquire_first.sql, acquire.sql). Nobody is
-- told: nobody waits in line, and an acquisition placing its entry while this runs marks the
-- row after it, under the row lock, and so sees the lock free (its statement says so).
-- A mark made while this statement waited for the row lock is seen here: the condition is
-- checked again on the newest row version.
-- No row comes back when the hold is not ours or the row is marked: release.sql then does the
-- whole release, which hands the lock to the first waiter.
UPDATE "{table}" SET owner = NULL, lease_end = now()
WHERE name = $1 AND owner = $2 AND lease_end > now()
  AND (queued_until IS NULL OR queued_until <= now())
RETURNING name
