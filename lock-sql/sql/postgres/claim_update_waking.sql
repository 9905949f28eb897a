-- $1 state, $2 name, $3 kind, $4 version read, $5 notification channel: the compare-and-set of
-- claim_update.sql for a change that may let waiters in, waking them with a notification that
-- carries the lock name (sent when the statement commits) in the same statement.
WITH changed AS (
    UPDATE "{claims}" SET state = $1, version = version + 1
    WHERE name = $2 AND kind = $3 AND version = $4
    RETURNING name
)
SELECT pg_notify($5, name) FROM changed
