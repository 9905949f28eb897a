CREATE TABLE IF NOT EXISTS "{table}" (
    name      TEXT        NOT NULL PRIMARY KEY,
    owner     BYTEA,
    fence     BIGINT      NOT NULL,
    lease_end TIMESTAMPTZ NOT NULL
)
