-- Binds: name, waiter id, lifetime_us, sleeper, lifetime_us, sleeper. Record (or refresh) a
-- waiting acquisition, expiring by the database clock unless refreshed again, with the id of
-- the connection it parks (NULL when it parks none). The arrival time is set once, by the
-- first statement: it is the entry's place in line.
INSERT INTO `{waiters}` (name, waiter, expires_at, queued_at, sleeper)
VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6), ?)
ON DUPLICATE KEY UPDATE expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, sleeper = ?
