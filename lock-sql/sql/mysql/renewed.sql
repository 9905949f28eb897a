-- ? the JSON array renew_all.sql was given. Right after it, on the same connection: the
-- position (from 1) of each entry whose hold is ours and live, which is each one it extended
-- (a hold it did not extend had ended, and only a renewal with its owner token revives it).
SELECT CAST(batch.position AS SIGNED)
FROM JSON_TABLE(?, '$[*]' COLUMNS (
         position FOR ORDINALITY,
         name     VARCHAR(510) PATH '$[0]',
         owner    CHAR(32)     PATH '$[1]'
     )) AS batch
    STRAIGHT_JOIN `{table}` AS held FORCE INDEX (PRIMARY)
        ON held.name = UNHEX(batch.name) AND held.owner = UNHEX(batch.owner)
WHERE held.lease_end > UTC_TIMESTAMP(6)
