-- Binds: name, waiter id. The acquisition no longer waits. Expired entries of the same name
-- (left by processes that died waiting) go too.
DELETE FROM `{waiters}`
WHERE name = ? AND (waiter = ? OR expires_at <= UTC_TIMESTAMP(6))
