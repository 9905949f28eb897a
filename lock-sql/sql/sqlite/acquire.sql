-- ?1 name, ?2 owner token, ?3 lease in milliseconds, ?4 owner label, ?5 the acquisition's
-- waiter entry id (placed or not); {now} is the time in milliseconds, fixed for the whole
-- statement. Insert the row, or take over one that is free or whose lease ended, raising the
-- fencing counter and recording the label and grant time; a held row is left alone and no
-- row comes back. The next token is one past the counter and never below the clock in
-- microseconds (whole milliseconds times 1000), so tokens keep rising even when the file
-- went back to an older copy.
-- Waiters are served in arrival order: a free row is left alone too while a live waiter entry
-- of the name is ahead of this acquisition's entry (every live entry is ahead of an
-- acquisition that placed none); a missing row is then inserted free, and the row that comes
-- back has no fence. A hold a release granted this acquisition (release.sql: `?2` holds it)
-- is its turn whatever the line says, and is taken over as a free row is: the grant taken up.
-- `excluded.owner` is the token exactly when it is this acquisition's turn.
-- (`WHERE true` tells SQLite's parser that ON CONFLICT belongs to the INSERT.)
INSERT INTO "{table}" (name, owner, fence, lease_end, owner_label, granted_at)
SELECT ?1, IIF(turn.clear, ?2, NULL), {now} * 1000, IIF(turn.clear, {now} + ?3, {now}),
       IIF(turn.clear, ?4, NULL), IIF(turn.clear, {now}, NULL)
FROM (
    SELECT EXISTS (SELECT 1 FROM "{table}" WHERE name = ?1 AND owner = ?2 AND lease_end > {now})
        OR NOT EXISTS (
        SELECT 1 FROM "{waiters}" AS w
        LEFT JOIN "{waiters}" AS mine ON mine.name = w.name AND mine.waiter = ?5
        WHERE w.name = ?1 AND w.expires_at > {now}
          AND (mine.waiter IS NULL
               OR w.queued_at < mine.queued_at
               OR (w.queued_at = mine.queued_at AND w.waiter < mine.waiter))
    ) AS clear
) AS turn
WHERE true
ON CONFLICT (name) DO UPDATE
    SET owner = excluded.owner,
        fence = MAX(fence + 1, excluded.fence),
        lease_end = excluded.lease_end,
        owner_label = excluded.owner_label,
        granted_at = excluded.granted_at
    WHERE (owner IS NULL OR lease_end <= {now} OR owner = excluded.owner)
      AND excluded.owner IS NOT NULL
RETURNING IIF(owner IS NULL, NULL, fence)
