-- ? a JSON array with one entry per hold, sorted by name (so concurrent batches lock rows in
-- one order): [name in hex, owner token in hex, lease in microseconds]. Extends each hold that
-- is still ours and live. The connection reports matched rows (CLIENT_FOUND_ROWS): as many as
-- entries means every hold was extended; fewer, renewed.sql says which.
-- The lock table is read by its primary key for each entry, so only the batch's rows are
-- locked, however small the table.
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (
           name     VARCHAR(510) PATH '$[0]',
           owner    CHAR(32)     PATH '$[1]',
           lease_us BIGINT       PATH '$[2]'
       )) AS batch
    STRAIGHT_JOIN `{table}` AS held FORCE INDEX (PRIMARY)
        ON held.name = UNHEX(batch.name) AND held.owner = UNHEX(batch.owner)
SET held.lease_end = UTC_TIMESTAMP(6) + INTERVAL batch.lease_us MICROSECOND
WHERE held.lease_end > UTC_TIMESTAMP(6)
