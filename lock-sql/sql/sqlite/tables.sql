-- Which of the three tables exist: the schema step creates only the missing ones.
SELECT name FROM sqlite_master
WHERE type = 'table' AND name IN ('{table}', '{waiters}', '{claims}')
