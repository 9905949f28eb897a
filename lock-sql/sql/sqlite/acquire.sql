-- ?1 name, ?2 owner token, ?3 lease in milliseconds, ?4 owner label; {now} is the time in
-- milliseconds, fixed for the whole statement. Insert the row, or take over one that is free
-- or whose lease ended, raising the fencing counter and recording the label and grant time; a
-- held row is left alone and no row comes back. The next token is one past the counter and
-- never below the clock in microseconds (whole milliseconds times 1000), so tokens keep rising
-- even when the file went back to an older copy.
INSERT INTO "{table}" (name, owner, fence, lease_end, owner_label, granted_at)
VALUES (?1, ?2, {now} * 1000, {now} + ?3, ?4, {now})
ON CONFLICT (name) DO UPDATE
    SET owner = excluded.owner,
        fence = MAX(fence + 1, excluded.fence),
        lease_end = excluded.lease_end,
        owner_label = excluded.owner_label,
        granted_at = excluded.granted_at
    WHERE owner IS NULL OR lease_end <= {now}
RETURNING fence
