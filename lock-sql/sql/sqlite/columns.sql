-- The columns of the lock table and its waiters table (each column upgrade.sql adds is in
-- one of them only).
SELECT name FROM pragma_table_info('{table}')
UNION ALL
SELECT name FROM pragma_table_info('{waiters}')
