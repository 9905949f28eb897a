-- $1 name, $2 waiter id: the acquisition no longer waits. Expired entries of the same name
-- (left by processes that died waiting) go too.
DELETE FROM "{waiters}" WHERE name = $1 AND (waiter = $2 OR expires_at <= now())
