-- Binds: lease_us, name, owner. Extend our live hold.
UPDATE `{table}` SET lease_end = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND owner = ? AND lease_end > UTC_TIMESTAMP(6)
