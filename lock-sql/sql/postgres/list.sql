-- $1 LIKE pattern with `!` as its escape character: the names held now that match it.
SELECT name FROM "{table}"
WHERE owner IS NOT NULL AND lease_end > now() AND name LIKE $1 ESCAPE '!'
