-- ?1 name, ?2 owner: clear the owner (the row and its fencing counter stay) if the live hold
-- is ours.
UPDATE "{table}" SET owner = NULL, lease_end = {now}
WHERE name = ?1 AND owner = ?2 AND lease_end > {now}
