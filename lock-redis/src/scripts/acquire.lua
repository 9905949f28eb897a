-- Acquire: take the lock if it is free and no earlier waiter is queued for it; hand out the
-- next fencing token. Waiters queue in arrival order, so a releaser re-acquiring at once or a
-- lucky poller cannot starve them.
-- KEYS[1] lock key (holds 'OWNER_TOKEN GRANTED_MS LABEL': the owner's token, the grant time by
-- the server clock in ms, the holder's owner label), KEYS[2] fence counter (never expires),
-- KEYS[3] waiter queue (zset: token -> arrival time), KEYS[4] waiter expiries (zset: waiter ->
-- time after which a waiter that stopped refreshing is dropped; it also counts polling waiters,
-- which are never queued), KEYS[5] queued waiters' grant terms (see ARGV[8]).
-- ARGV[1] owner token, ARGV[2] lease ms, ARGV[3] what a caller that is not granted leaves:
-- '0' nothing (a single try), '1' a place in the queue (joined or refreshed), '2' a count as a
-- polling waiter under ARGV[6] in KEYS[4] only, '3' the same, and an earlier call may have
-- counted it, so a grant drops that count. ARGV[4] how long a waiter's entry stays without
-- refreshing, ms. ARGV[5] owner label. ARGV[6] the polling waiter's id (modes '2' and '3').
-- ARGV[7] '1' to take the next fence (store it in the counter), '0' to only propose it: a
-- Redlock stores the fence its majority agrees on afterwards, so a master whose grant came too
-- late to count never holds a counter the hold was not given. ARGV[8] '1' when a queued caller
-- may be granted by the release that makes it first in line (mode '1' only): its lease and
-- label wait in KEYS[5] (hash: token -> 'LEASE_MS LABEL') for that release.
-- A queued caller may so find the lock already its own (granted by a release whose message it
-- has not heard): the try then renews it to ARGV[2] and returns the fence that grant took.
-- Returns {1, fence} on a grant; {0, ms} when not granted: the lock's PTTL (-1: no expiry), or,
-- when the lock is free but another waiter is first, how long that waiter's entry may last.
-- Fast path: no queue key means no waiter is queued (a waiter joins in the same script run that
-- finds the lock taken, before it sleeps), so the lock is free to take outright: no queue
-- upkeep. The grant and the reply are the same as the queue path's with an empty queue. The
-- server clock is read once, first: it dates the hold in the lock key's value and floors the
-- fence.
local clock = redis.call('TIME')
local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local now_ms = math.floor(now_us / 1000)
local value = ARGV[1] .. ' ' .. string.format('%d', now_ms) .. ' ' .. ARGV[5]
local function take()
  return redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[2])
end
-- The next fencing token (for a Redlock, this master's proposal): one past the counter, and
-- never below the server clock in microseconds. Tokens so keep rising even when the counter is
-- lost with the data (a restart without persistence, a failover to a replica that never saw
-- the last grant), as long as the new server's clock is not behind the lost grants' time.
local function granted()
  local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now_us)
  if ARGV[7] == '1' then
    redis.call('SET', KEYS[2], string.format('%d', fence))
  end
  if ARGV[3] == '3' then
    redis.call('ZREM', KEYS[4], ARGV[6])
  end
  return {1, fence}
end
-- A polling waiter is counted (for inspection) but never queued: it cannot hold up a grant.
local function count_poller()
  redis.call('ZADD', KEYS[4], now_ms + tonumber(ARGV[4]), ARGV[6])
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
local queued = redis.call('EXISTS', KEYS[3]) == 1
if not queued then
  if take() then
    return granted()
  end
  if ARGV[3] ~= '1' then
    if ARGV[3] ~= '0' then
      count_poller()
    end
    return {0, redis.call('PTTL', KEYS[1])}
  end
  -- Held, and this caller queues: join the queue below (the SET just failed; no second try).
end
-- Joins the queue, or refreshes this caller's place in it (its arrival time stays).
local function join()
  redis.call('ZADD', KEYS[3], 'NX', now_us, ARGV[1])
  redis.call('ZADD', KEYS[4], now_ms + tonumber(ARGV[4]), ARGV[1])
  if ARGV[8] == '1' then
    redis.call('HSET', KEYS[5], ARGV[1], ARGV[2] .. ' ' .. ARGV[5])
    redis.call('PEXPIRE', KEYS[5], ARGV[4])
  end
  -- No entry outlives its waiter's last refresh by more than the ttl; neither do the queues.
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
-- Granted by a release while away (only a queued caller can be): keep it, at this try's lease.
-- Held by another: join at once. Who is first in line matters only once the lock is free, and
-- the grant that frees it drops the waiters that stopped refreshing first.
if ARGV[3] == '1' then
  local value = redis.call('GET', KEYS[1])
  if value and string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
  end
  if value then
    join()
    return {0, redis.call('PTTL', KEYS[1])}
  end
end
local function drop(waiters)
  redis.call('ZREM', KEYS[3], unpack(waiters))
  redis.call('ZREM', KEYS[4], unpack(waiters))
  redis.call('HDEL', KEYS[5], unpack(waiters))
end
local stale = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now_ms)
if #stale > 0 then
  drop(stale)
end
local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
-- A queued waiter without an expiry entry (the expiry set was evicted or deleted) could never
-- be dropped by age and would block the queue for good: drop it now.
while head and not redis.call('ZSCORE', KEYS[4], head) do
  drop({head})
  head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
end
if queued and (not head or head == ARGV[1]) and take() then
  if head then
    drop({ARGV[1]})
  end
  return granted()
end
if ARGV[3] == '1' then
  join()
elseif ARGV[3] ~= '0' then
  count_poller()
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 and head then
  local expiry = tonumber(redis.call('ZSCORE', KEYS[4], head) or now_ms)
  return {0, math.max(0, expiry - now_ms)}
end
return {0, pttl}
