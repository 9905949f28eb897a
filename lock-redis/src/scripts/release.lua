-- Release: delete the lock only if it still holds our token, then wake the waiters.
-- KEYS[1] lock key, KEYS[2] wake-up channel. ARGV[1] owner token.
-- Returns -1 when the lock was not ours (nothing changed), otherwise the number of
-- subscriber connections the wake-up reached.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return redis.call('PUBLISH', KEYS[2], 'released')
end
return -1
