-- Binds: name, kind, state. The first row of a name and kind; a duplicate key (a concurrent
-- first acquisition made it) inserts nothing and the caller reads again. Names are validated
-- to fit the column before any I/O, so IGNORE only ever skips the duplicate.
INSERT IGNORE INTO `{claims}` (name, kind, state, version) VALUES (?, ?, ?, 1)
