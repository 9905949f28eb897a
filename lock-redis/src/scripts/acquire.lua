-- Acquire: take the lock if it is free and no earlier waiter is queued for it; hand out the
-- next fencing token. Waiters queue in arrival order, so a releaser re-acquiring at once or a
-- lucky poller cannot starve them.
-- KEYS[1] lock key (holds only the owner's token), KEYS[2] fence counter (never expires),
-- KEYS[3] waiter queue (zset: token -> arrival time), KEYS[4] waiter expiries (zset: token ->
-- time after which a waiter that stopped refreshing is dropped).
-- ARGV[1] owner token, ARGV[2] lease ms, ARGV[3] 1 to join (or stay in) the queue when not
-- granted, ARGV[4] how long a queued waiter stays without refreshing, ms.
-- Returns {1, fence} on a grant; {0, ms} when not granted: the lock's PTTL (-1: no expiry), or,
-- when the lock is free but another waiter is first, how long that waiter's entry may last.
-- Fast path: no queue key means no waiter is queued (a waiter joins in the same script run that
-- finds the lock taken, before it sleeps), so the lock is free to take outright: no queue
-- upkeep. The grant and the reply are the same as the queue path's with an empty queue.
-- The next fencing token: one past the counter, and never below the server clock in
-- microseconds. Tokens so keep rising even when the counter is lost with the data (a restart
-- without persistence, a failover to a replica that never saw the last grant), as long as the
-- new server's clock is not behind the lost grants' time.
local function next_fence()
  local clock = redis.call('TIME')
  local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
  local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now_us)
  redis.call('SET', KEYS[2], string.format('%d', fence))
  return fence
end
local queued = redis.call('EXISTS', KEYS[3]) == 1
if not queued then
  if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return {1, next_fence()}
  end
  if ARGV[3] ~= '1' then
    return {0, redis.call('PTTL', KEYS[1])}
  end
  -- Held, and this caller waits: join the queue below (the SET just failed; no second try).
end
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)
local stale = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now_ms)
if #stale > 0 then
  redis.call('ZREM', KEYS[3], unpack(stale))
  redis.call('ZREM', KEYS[4], unpack(stale))
end
local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
-- A queued waiter without an expiry entry (the expiry set was evicted or deleted) could never
-- be dropped by age and would block the queue for good: drop it now.
while head and not redis.call('ZSCORE', KEYS[4], head) do
  redis.call('ZREM', KEYS[3], head)
  head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
end
if queued and (not head or head == ARGV[1]) and
    redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if head then
    redis.call('ZREM', KEYS[3], ARGV[1])
    redis.call('ZREM', KEYS[4], ARGV[1])
  end
  return {1, next_fence()}
end
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[3], 'NX', now_us, ARGV[1])
  redis.call('ZADD', KEYS[4], now_ms + tonumber(ARGV[4]), ARGV[1])
  -- No entry outlives its waiter's last refresh by more than the ttl; neither do the queues.
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 and head then
  local expiry = tonumber(redis.call('ZSCORE', KEYS[4], head) or now_ms)
  return {0, math.max(0, expiry - now_ms)}
end
return {0, pttl}
