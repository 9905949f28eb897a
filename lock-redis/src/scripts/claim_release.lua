-- Release a shared claim (also: leave the waiter queue): drop the holder and the queue entry
-- of this token, and when either may let a waiter in, publish on the object's channel; every
-- waiter of the object tries again (several may be admitted at once: readers, permits).
-- KEYS[1] holders, KEYS[2] holder info, KEYS[3] waiter queue, KEYS[4] waiters' claims,
-- KEYS[5] waiter expiries, KEYS[6] the semaphore limit, KEYS[7] wake-up channel.
-- ARGV[1] owner token, ARGV[2] '1' for an election: its observers hear of every release,
-- waiters or not.
-- Returns 1 when the token held (and no longer does), else 0.
local token = ARGV[1]
local held = redis.call('ZREM', KEYS[1], token)
redis.call('HDEL', KEYS[2], token)
local left = redis.call('ZREM', KEYS[3], token)
redis.call('HDEL', KEYS[4], token)
redis.call('ZREM', KEYS[5], token)
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[6])
end
if held == 1 and ARGV[2] == '1' then
  redis.call('PUBLISH', KEYS[7], '')
elseif (held == 1 or left == 1) and redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('PUBLISH', KEYS[7], '')
end
return held
