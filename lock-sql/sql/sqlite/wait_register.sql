-- ?1 name, ?2 waiter id, ?3 entry lifetime in milliseconds, ?4 owner token, ?5 lease in
-- milliseconds, ?6 owner label: record (or refresh) a waiting acquisition, expiring by the
-- database clock unless refreshed again, with the terms a release grants it the lock on
-- (release.sql), fixed for the acquisition. The place in line is set once, by the first
-- statement: one past the name's last (writes to a SQLite file are serialized, so no two
-- entries get the same).
INSERT INTO "{waiters}" (name, waiter, expires_at, queued_at,
                         grant_owner, grant_lease_ms, grant_label)
VALUES (?1, ?2, {now} + ?3,
        (SELECT COALESCE(MAX(queued_at), 0) + 1 FROM "{waiters}" WHERE name = ?1), ?4, ?5, ?6)
ON CONFLICT (name, waiter) DO UPDATE SET expires_at = excluded.expires_at
