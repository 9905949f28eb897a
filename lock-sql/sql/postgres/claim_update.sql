-- $1 state, $2 name, $3 kind, $4 version read: compare-and-set; no row changes when another
-- change came in between (the caller reads again).
UPDATE "{claims}" SET state = $1, version = version + 1
WHERE name = $2 AND kind = $3 AND version = $4
