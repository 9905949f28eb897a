-- $1 name, $2 owner token, $3 lease in microseconds: extend our live hold.
UPDATE "{table}"
SET lease_end = now() + CAST($3 AS DOUBLE PRECISION) * INTERVAL '1 microsecond'
WHERE name = $1 AND owner = $2 AND lease_end > now()
