-- $1 name, $2 waiter id, $3 entry lifetime in microseconds, $4 owner token, $5 lease in
-- microseconds, $6 owner label: record (or refresh) a waiting acquisition, expiring by the
-- database clock unless refreshed again, with the terms a release grants it the lock on. The
-- arrival time is set once, by the first statement: it is the entry's place in line.
INSERT INTO "{waiters}" (name, waiter, expires_at, queued_at, grant_owner, grant_lease_us, grant_label)
VALUES ($1, $2, now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond', now(), $4, $5, $6)
ON CONFLICT (name, waiter) DO UPDATE
    SET expires_at = EXCLUDED.expires_at,
        grant_owner = EXCLUDED.grant_owner,
        grant_lease_us = EXCLUDED.grant_lease_us,
        grant_label = EXCLUDED.grant_label
