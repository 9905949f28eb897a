-- Which of the three tables exist in the connection's database (among those the user holds
-- any privilege on): the schema step creates only the missing ones, so a user without CREATE
-- works once an administrator made the tables.
SELECT CONVERT(TABLE_NAME USING utf8mb4) FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('{table}', '{waiters}', '{claims}')
