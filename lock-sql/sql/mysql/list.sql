-- Binds: LIKE pattern with `!` as its escape character. The names held now that match it.
SELECT name FROM `{table}`
WHERE owner IS NOT NULL AND lease_end > UTC_TIMESTAMP(6) AND name LIKE ? ESCAPE '!'
