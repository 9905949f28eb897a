-- Binds: name, owner. Clear the owner (the row and its fencing counter stay) if the live hold
-- is ours. The connection reports matched rows (CLIENT_FOUND_ROWS): 1 means released.
UPDATE `{table}` SET owner = NULL, lease_end = UTC_TIMESTAMP(6)
WHERE name = ? AND owner = ? AND lease_end > UTC_TIMESTAMP(6)
