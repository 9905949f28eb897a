-- Renew: extend the lease only if the lock still holds our token.
-- KEYS[1] lock key. ARGV[1] owner token, ARGV[2] lease in milliseconds.
-- Returns 1 when extended, 0 when the lock is not ours any more.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
