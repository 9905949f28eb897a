-- Binds: name, name. After an acquisition left the line without the lock: the parked
-- connection (park.sql) of the first live waiter, while the lock is free. A release may have
-- rung the one that left in its place, or a holder's lease ended meanwhile; with the lock held,
-- the next release rings whoever is first. Only a connection that runs a park (its text
-- carries the `distlock park` mark), or nothing, is returned: an entry written before the
-- server restarted may name an id that now belongs to another client. This path is rare
-- enough to read the process list, which release.sql cannot afford.
SELECT p.ID FROM information_schema.PROCESSLIST AS p
WHERE p.ID = (SELECT w.sleeper FROM `{waiters}` AS w
              WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6)
              ORDER BY w.queued_at, w.waiter LIMIT 1)
  AND (p.INFO IS NULL OR p.INFO LIKE '%distlock park%')
  AND NOT EXISTS (SELECT 1 FROM `{table}` AS held
                  WHERE held.name = ? AND held.owner IS NOT NULL
                    AND held.lease_end > UTC_TIMESTAMP(6))
