-- Binds: state, name, kind, version read. Compare-and-set; no row matches when another change
-- came in between (the caller reads again).
UPDATE `{claims}` SET state = ?, version = version + 1
WHERE name = ? AND kind = ? AND version = ?
