-- $1 name, $2 owner token, $3 lease in microseconds, $4 owner label.
-- The first try of an acquisition that will wait, on a lock row this service saw exist
-- (distlock never deletes one): acquire_row.sql's grant without its snapshot of the row, so
-- the server runs a bare `UPDATE` of one row by its primary key and nothing else. The row is
-- taken over when it is free (or its lease ended by the database clock) and no waiter entry
-- of the name can be live (`queued_until`, see acquire_free.sql); the `WHERE` clause is
-- checked again on the newest row version when the `UPDATE` waited for the row lock, which
-- makes the grant atomic. The fence is one past the counter and never below the database
-- clock in microseconds, as acquire_first.sql's.
-- A row comes back with the fence when granted; none when the lock is held, marked for
-- waiters or the row is gone: the acquisition then sends acquire_first.sql, which tells those
-- apart, inserts a missing row and places the waiter entry, as it would after a refused
-- acquire_row.sql.
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
