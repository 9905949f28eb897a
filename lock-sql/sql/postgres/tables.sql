-- Which of the three tables exist, resolved through the search path as the other statements
-- resolve them: the schema step creates only the missing ones, so a user without CREATE on
-- the schema works once an administrator made the tables.
SELECT CAST(t.name AS TEXT) FROM (VALUES ('{table}'), ('{waiters}'), ('{claims}')) AS t(name)
WHERE to_regclass('"' || t.name || '"') IS NOT NULL
