-- $1 names, $2 owner tokens, $3 leases in microseconds: one entry per hold, sorted by name (so
-- concurrent batches lock rows in one order). Extends each hold that is still ours and live;
-- returns the position (from 1) in the arrays of each one extended.
UPDATE "{table}" AS held
SET lease_end = now() + CAST(batch.lease_us AS DOUBLE PRECISION) * INTERVAL '1 microsecond'
FROM UNNEST(CAST($1 AS TEXT[]), CAST($2 AS BYTEA[]), CAST($3 AS BIGINT[])) WITH ORDINALITY
     AS batch(name, owner, lease_us, position)
WHERE held.name = batch.name AND held.owner = batch.owner AND held.lease_end > now()
RETURNING batch.position
