-- ?1 name: the holder's lease left, in milliseconds.
SELECT lease_end - {now} FROM "{table}" WHERE name = ?1 AND owner IS NOT NULL
