-- ?1 name, ?2 owner: if the live hold is ours, grant the lock to the first live waiter entry
-- in line on the terms it carries (wait_register.sql): its owner token, a lease from now, its
-- label, the next fence (one past the counter and never below the clock in microseconds, as
-- acquire.sql's) and the grant time; with no such entry, clear the owner (the row and its
-- fencing counter stay). An entry of the releasing owner, which it leaves right after its
-- grant, is passed over; an entry without terms (placed by an earlier version, which takes
-- its turn itself) is granted nothing, and the lock is freed. The entry stays until its
-- waiter, taking the grant up (acquire.sql), removes it. Every assignment reads the old row.
-- The waiters table is read on every release: on a local file that read is an index lookup,
-- far below the cost of the write itself.
WITH head AS (
    SELECT grant_owner, grant_lease_ms, grant_label FROM "{waiters}"
    WHERE name = ?1 AND expires_at > {now} AND (grant_owner IS NULL OR grant_owner <> ?2)
    ORDER BY queued_at, waiter LIMIT 1
)
UPDATE "{table}" SET
    owner = (SELECT grant_owner FROM head),
    fence = IIF((SELECT grant_owner FROM head) IS NULL, fence, MAX(fence + 1, {now} * 1000)),
    lease_end = COALESCE((SELECT {now} + grant_lease_ms FROM head
                          WHERE grant_owner IS NOT NULL), {now}),
    owner_label = IIF((SELECT grant_owner FROM head) IS NULL, owner_label,
                      (SELECT grant_label FROM head)),
    granted_at = IIF((SELECT grant_owner FROM head) IS NULL, granted_at, {now})
WHERE name = ?1 AND owner = ?2 AND lease_end > {now}
