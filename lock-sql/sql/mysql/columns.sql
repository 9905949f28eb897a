-- The columns of the lock table and its waiters table in the connection's database (each
-- column upgrade.sql adds is in one of them only), as text whatever the catalog's collation.
SELECT CONVERT(COLUMN_NAME USING utf8mb4) FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('{table}', '{waiters}')
