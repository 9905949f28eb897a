-- Binds: name. End the live hold, if any, keeping the fencing counter.
UPDATE `{table}` SET owner = NULL, lease_end = UTC_TIMESTAMP(6)
WHERE name = ? AND owner IS NOT NULL AND lease_end > UTC_TIMESTAMP(6)
