-- The lock table's columns, resolved through the search path as the other statements
-- resolve the table.
SELECT CAST(attname AS TEXT) FROM pg_attribute
WHERE attrelid = to_regclass('"{table}"') AND attnum > 0 AND NOT attisdropped
