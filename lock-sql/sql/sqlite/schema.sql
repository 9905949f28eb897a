CREATE TABLE IF NOT EXISTS "{table}" (
    name      TEXT    NOT NULL PRIMARY KEY,
    owner     BLOB,
    fence     INTEGER NOT NULL,
    lease_end INTEGER NOT NULL -- milliseconds since 1970 by the database host's clock
)
