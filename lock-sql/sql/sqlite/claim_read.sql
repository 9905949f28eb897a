-- ?1 name, ?2 kind: the claim row's state and version (NULL when there is none yet) and the
-- database clock in microseconds (whole milliseconds times 1000), which every lease and expiry
-- in the state is measured by.
SELECT c.state, c.version, {now} * 1000 AS now_us
FROM (SELECT 1) AS one
LEFT JOIN "{claims}" AS c ON c.name = ?1 AND c.kind = ?2
