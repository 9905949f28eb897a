-- $1 name, $2 kind, $3 state: the first row of a name and kind; no row is inserted when a
-- concurrent first acquisition made it (the caller reads again).
INSERT INTO "{claims}" (name, kind, state, version) VALUES ($1, $2, $3, 1)
ON CONFLICT (name, kind) DO NOTHING
