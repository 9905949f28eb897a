-- Binds: name, waiter id, lifetime_us, sleeper, owner, lease_us, label, lifetime_us,
-- sleeper. Record (or refresh) a waiting acquisition, expiring by the database clock unless
-- refreshed again, with the id of the connection it parks (NULL when it parks none) and the
-- terms a release grants it the lock on (grant_head.sql): its owner token, lease and label,
-- fixed for the acquisition. The arrival time is set once, by the first statement: it is the
-- entry's place in line.
INSERT INTO `{waiters}` (name, waiter, expires_at, queued_at, sleeper,
                         grant_owner, grant_lease_us, grant_label)
VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6), ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, sleeper = ?
