-- ?1 LIKE pattern with `!` as its escape character: the names held now that match it
-- (SQLite's LIKE ignores ASCII case, so the caller checks the prefix exactly).
SELECT name FROM "{table}"
WHERE owner IS NOT NULL AND lease_end > {now} AND name LIKE ?1 ESCAPE '!'
