-- ?1 name, ?2 owner token, ?3 lease in milliseconds; {now} is the time in milliseconds,
-- fixed for the whole statement. Insert the row, or take over one that is free or whose lease
-- ended, incrementing the fencing counter; a held row is left alone and no row comes back.
INSERT INTO "{table}" (name, owner, fence, lease_end)
VALUES (?1, ?2, 1, {now} + ?3)
ON CONFLICT (name) DO UPDATE
    SET owner = excluded.owner,
        fence = fence + 1,
        lease_end = excluded.lease_end
    WHERE owner IS NULL OR lease_end <= {now}
RETURNING fence
