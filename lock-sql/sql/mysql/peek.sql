-- Binds: name. Who holds the row now, its fencing counter, and the lease left.
SELECT fence, owner, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_end) AS remaining_us
FROM `{table}` WHERE name = ?
