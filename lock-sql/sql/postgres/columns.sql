-- The columns of the lock table and its waiters table (each column upgrade.sql adds is in
-- one of them only), resolved through the search path as the other statements resolve them.
SELECT CAST(attname AS TEXT) FROM pg_attribute
WHERE attrelid IN (to_regclass('"{table}"'), to_regclass('"{waiters}"'))
  AND attnum > 0 AND NOT attisdropped
