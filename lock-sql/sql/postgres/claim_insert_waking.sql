-- $1 name, $2 kind, $3 state, $4 notification channel: the first row of claim_insert.sql for a
-- change others must hear of (an election's first leader), notifying with the lock name (sent
-- when the statement commits) in the same statement.
WITH inserted AS (
    INSERT INTO "{claims}" (name, kind, state, version) VALUES ($1, $2, $3, 1)
    ON CONFLICT (name, kind) DO NOTHING
    RETURNING name
)
SELECT pg_notify($4, name) FROM inserted
