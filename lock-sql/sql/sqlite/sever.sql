-- ?1 name: end whatever hold there is, keeping the fencing counter.
UPDATE "{table}" SET owner = NULL, lease_end = {now}
WHERE name = ?1 AND owner IS NOT NULL
