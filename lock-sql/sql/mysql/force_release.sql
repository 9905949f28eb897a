-- Binds: name, fencing token. End the live hold on the name if its fencing counter is the
-- token (the row and counter stay; a newer holder has a larger counter and is never touched).
-- The connection reports matched rows (CLIENT_FOUND_ROWS): 1 means released.
UPDATE `{table}` SET owner = NULL, lease_end = UTC_TIMESTAMP(6)
WHERE name = ? AND fence = ? AND owner IS NOT NULL AND lease_end > UTC_TIMESTAMP(6)
