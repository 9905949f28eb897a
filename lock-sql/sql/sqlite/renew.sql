-- ?1 name, ?2 owner, ?3 lease in milliseconds: extend our live hold.
UPDATE "{table}" SET lease_end = {now} + ?3
WHERE name = ?1 AND owner = ?2 AND lease_end > {now}
