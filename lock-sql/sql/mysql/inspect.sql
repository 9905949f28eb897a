-- Binds: name. Always one row: the live hold, if any (owner label, fencing counter,
-- grant time since 1970 and lease left, in microseconds by the database clock), and the count
-- of live waiter entries.
SELECT held.owner_label,
       held.fence,
       TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', held.granted_at) AS granted_us,
       TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), held.lease_end) AS remaining_us,
       (SELECT COUNT(*) FROM `{waiters}` AS w
        WHERE w.name = one.name AND w.expires_at > UTC_TIMESTAMP(6)) AS waiters
FROM (SELECT ? AS name) AS one
LEFT JOIN `{table}` AS held
    ON held.name = one.name AND held.owner IS NOT NULL
       AND held.lease_end > UTC_TIMESTAMP(6)
