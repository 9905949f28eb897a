-- Binds: name, owner. Sent by a waiting acquisition whose turn came (its parked connection
-- was interrupted, or found it): the fence of our live hold, which a release granted to its
-- entry on the terms the entry carries (release_grant.sql, grant_head.sql). A plain read, which
-- locks nothing and waits for no statement on the row: the release committed before it rang.
-- The grant set the lease from its own time, so the hold's lease runs from the grant. No row:
-- not ours, and the acquire statements decide.
SELECT fence FROM `{table}`
WHERE name = ? AND owner = ? AND lease_end > UTC_TIMESTAMP(6)
