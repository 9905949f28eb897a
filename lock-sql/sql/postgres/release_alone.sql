-- $1 name, $2 owner token, $3 the table's notification channel.
-- End our live hold when no live waiter is in line: what release.sql does when it finds no
-- waiter to grant, without the row locks and the hand-over it runs through first, which make
-- it cost about a quarter more. The name alone is sent, as release.sql sends it then, so an
-- acquisition that found the lock held and placed its entry after this statement's snapshot
-- hears it and tries again.
-- No row comes back when the hold is not ours, or when a live waiter is in line (an entry
-- being removed counts until its removal commits): release.sql then does the whole release.
UPDATE "{table}" SET owner = NULL, lease_end = now()
WHERE name = $1 AND owner = $2 AND lease_end > now()
  AND NOT EXISTS (
      SELECT 1 FROM "{waiters}" AS w WHERE w.name = $1 AND w.expires_at > now()
  )
RETURNING name, pg_notify($3, name)
