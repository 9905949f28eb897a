-- ?1 name. Always one row: the live hold, if any (owner label, fencing counter, grant time
-- since 1970 and lease left, in milliseconds by the database clock), and the count of live
-- waiter entries.
SELECT held.owner_label,
       held.fence,
       held.granted_at,
       held.lease_end - {now},
       (SELECT count(*) FROM "{waiters}" AS w WHERE w.name = ?1 AND w.expires_at > {now})
FROM (SELECT 1) AS one
LEFT JOIN "{table}" AS held
    ON held.name = ?1 AND held.owner IS NOT NULL AND held.lease_end > {now}
