-- The lock table's columns in the connection's database, as text whatever the catalog's
-- collation.
SELECT CONVERT(COLUMN_NAME USING utf8mb4) FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}'
