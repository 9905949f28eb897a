CREATE TABLE IF NOT EXISTS `{table}` (
    name      VARBINARY(255) NOT NULL PRIMARY KEY,
    owner     BINARY(16)     NULL,
    fence     BIGINT         NOT NULL,
    lease_end DATETIME(6)    NOT NULL
) ENGINE = InnoDB
