-- Binds: name, kind. The claim row's state and version (NULL when there is none yet) and the
-- database clock in microseconds, which every lease and expiry in the state is measured by.
SELECT c.state, c.version, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED) AS now_us
FROM (SELECT 1) AS one
LEFT JOIN `{claims}` AS c ON c.name = ? AND c.kind = ?
