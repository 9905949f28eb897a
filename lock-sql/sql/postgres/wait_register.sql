-- $1 name, $2 waiter id, $3 entry lifetime in microseconds: record (or refresh) a waiting
-- acquisition, expiring by the database clock unless refreshed again. The arrival time is
-- set once, by the first statement: it is the entry's place in line.
INSERT INTO "{waiters}" (name, waiter, expires_at, queued_at)
VALUES ($1, $2, now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond', now())
ON CONFLICT (name, waiter) DO UPDATE SET expires_at = EXCLUDED.expires_at
