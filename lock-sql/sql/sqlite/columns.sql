-- The lock table's columns.
SELECT name FROM pragma_table_info('{table}')
