-- Binds: name, lifetime_us, lifetime_us. Sent before a waiter entry of the name is placed or
-- refreshed: the lock row notes until when an entry may be live, so that the acquire
-- statement reads the waiters table only while that time lies ahead (a missing row is
-- inserted free). It only ever moves later, so it covers every entry placed before it.
INSERT INTO `{table}` (name, owner, fence, lease_end, queued_until)
VALUES (?, NULL, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE
    queued_until = GREATEST(COALESCE(queued_until, UTC_TIMESTAMP(6)),
                            UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
