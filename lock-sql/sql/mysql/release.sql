-- Binds: name, owner. End the live hold if it is ours, by moving its lease end to the distant
-- past. The row keeps its fencing counter and the owner token: a token of the same size stays
-- in place of ours, so that acquire_row.sql changes the row in place; every statement takes
-- a hold as live only while its lease runs, so the token alone holds nothing, and the past
-- lease end keeps it so even if the database clock steps back. The connection reports
-- matched rows (CLIENT_FOUND_ROWS): 1 means released.
UPDATE `{table}` SET lease_end = '1970-01-01 00:00:00'
WHERE name = ? AND owner = ? AND lease_end > UTC_TIMESTAMP(6)
