-- The least FIFO lock that fences the way distlock does: refuse while a waiter queue exists
-- at KEYS[3] (waiters are served in arrival order, so nobody takes a lock ahead of them), set
-- KEYS[1] to the token ARGV[1] with a lease of ARGV[2] ms if it is absent, and only then take
-- the next fence: one past the counter KEYS[2] and never below the server clock in
-- microseconds, so that fences keep rising when a failover loses the counter's last grants.
-- Returns the fence, or 0 when not granted.
if redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
local clock = redis.call('TIME')
local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now_us)
redis.call('SET', KEYS[2], string.format('%d', fence))
return fence
