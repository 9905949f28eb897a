-- ?1 name, ?2 waiter id, ?3 entry lifetime in milliseconds: record (or refresh) a waiting
-- acquisition, expiring by the database clock unless refreshed again.
INSERT INTO "{waiters}" (name, waiter, expires_at)
VALUES (?1, ?2, {now} + ?3)
ON CONFLICT (name, waiter) DO UPDATE SET expires_at = excluded.expires_at
