-- Acquire: take the lock if it is free and hand out the next fencing token.
-- KEYS[1] lock key (holds only the owner's token), KEYS[2] fence counter (never expires).
-- ARGV[1] owner token, ARGV[2] lease in milliseconds.
-- Returns {1, fence} on a grant, {0, pttl} when held elsewhere (pttl -1: held without expiry).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('INCR', KEYS[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
