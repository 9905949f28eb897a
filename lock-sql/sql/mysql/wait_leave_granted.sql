-- Binds: name, waiter id. The acquisition was granted the lock: its entry goes, by its key
-- alone. Unlike wait_leave.sql it locks no other entry of the name, so it waits for no
-- waiter placing or refreshing its own.
DELETE FROM `{waiters}` WHERE name = ? AND waiter = ?
