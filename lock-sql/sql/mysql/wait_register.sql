-- Binds: name, waiter id, lifetime_us, lifetime_us. Record (or refresh) a waiting
-- acquisition, expiring by the database clock unless refreshed again.
INSERT INTO `{waiters}` (name, waiter, expires_at)
VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
