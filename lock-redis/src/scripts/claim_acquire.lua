-- Acquire a shared claim: one permit of a semaphore, or a read or write hold of a read-write
-- lock. Holders and waiters live in sorted sets under the object's hash tag, each holder with
-- its own lease; the rule is the memory backend's: a permit needs fewer waiters ahead than
-- free permits (and the holders' limit), a read needs no writer holding or waiting ahead, a
-- write needs nobody holding and nobody ahead.
-- KEYS[1] holders (zset: token -> lease end, server ms), KEYS[2] holder info (hash: token ->
-- 'CLAIM FENCE GRANTED_MS LABEL'), KEYS[3] fence counter (never expires), KEYS[4] waiter queue
-- (zset: token -> arrival, server us), KEYS[5] waiters' claims (hash: token -> CLAIM),
-- KEYS[6] waiter expiries (zset: token -> time after which an unrefreshed waiter is dropped),
-- KEYS[7] the semaphore limit its holders use, KEYS[8] an election's term counter (never
-- expires), KEYS[9] the object's change channel.
-- ARGV[1] owner token, ARGV[2] lease ms, ARGV[3] claim ('p', 'r' or 'w'), ARGV[4] the
-- semaphore limit ('0' for read-write), ARGV[5] '1' to join (or refresh) the queue when not
-- granted, '0' for a single try, ARGV[6] how long a waiter's entry lasts unrefreshed, ms,
-- ARGV[7] owner label, ARGV[8] '1' for an election: a grant raises the term by one and is
-- announced on the channel, for observers.
-- Returns {1, fence} on a grant; {0, ms} when not: how soon the first blocking holder's lease
-- ends (-1: no holder blocks, only waiters ahead); {-1, limit} when the holders use another
-- semaphore limit.
local clock = redis.call('TIME')
local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local now_ms = math.floor(now_us / 1000)
local token, claim = ARGV[1], ARGV[3]

local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
local stale = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now_ms)
if #stale > 0 then
  redis.call('ZREM', KEYS[4], unpack(stale))
  redis.call('HDEL', KEYS[5], unpack(stale))
  redis.call('ZREM', KEYS[6], unpack(stale))
end
local holders = redis.call('ZCARD', KEYS[1])
if holders == 0 then
  redis.call('DEL', KEYS[7])
end
if claim == 'p' then
  local limit = redis.call('GET', KEYS[7])
  if limit and limit ~= ARGV[4] then
    return {-1, tonumber(limit)}
  end
end

-- The waiters ahead of this caller: all of them unless it already has a place.
local place = redis.call('ZSCORE', KEYS[4], token)
local ahead
if place then
  ahead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. place)
else
  ahead = redis.call('ZRANGE', KEYS[4], 0, -1)
end
-- A writer holds alone, so a writer holds exactly when the one holder is one.
local function writer_holds()
  if holders ~= 1 then
    return false
  end
  local only = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  local info = redis.call('HGET', KEYS[2], only)
  return info ~= false and string.sub(info, 1, 1) == 'w'
end
local function writer_ahead()
  if #ahead == 0 then
    return false
  end
  for _, queued in ipairs(redis.call('HMGET', KEYS[5], unpack(ahead))) do
    if queued == 'w' then
      return true
    end
  end
  return false
end

local grant
if claim == 'p' then
  grant = #ahead < tonumber(ARGV[4]) - holders
elseif claim == 'r' then
  grant = not writer_holds() and not writer_ahead()
else
  grant = holders == 0 and #ahead == 0
end

-- Every key of the object lives as long as its longest lease or waiter entry, no longer.
local function keep(key, ms)
  local ttl = redis.call('PTTL', key)
  if ttl >= 0 and ttl < ms then
    redis.call('PEXPIRE', key, ms)
  end
  if ttl == -1 then
    redis.call('PEXPIRE', key, ms)
  end
end

if grant then
  if place then
    redis.call('ZREM', KEYS[4], token)
    redis.call('HDEL', KEYS[5], token)
    redis.call('ZREM', KEYS[6], token)
  end
  local fence = math.max(tonumber(redis.call('GET', KEYS[3]) or '0') + 1, now_us)
  redis.call('SET', KEYS[3], string.format('%d', fence))
  local lease = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], now_ms + lease, token)
  redis.call('HSET', KEYS[2], token,
    claim .. ' ' .. string.format('%d', fence) .. ' ' .. string.format('%d', now_ms) .. ' ' .. ARGV[7])
  keep(KEYS[1], lease)
  keep(KEYS[2], lease)
  if claim == 'p' then
    redis.call('SET', KEYS[7], ARGV[4])
    keep(KEYS[7], lease)
  end
  if ARGV[8] == '1' then
    redis.call('INCR', KEYS[8])
    redis.call('PUBLISH', KEYS[9], '')
  end
  return {1, fence}
end

if ARGV[5] == '1' then
  local ttl = tonumber(ARGV[6])
  redis.call('ZADD', KEYS[4], 'NX', now_us, token)
  redis.call('HSET', KEYS[5], token, claim)
  redis.call('ZADD', KEYS[6], now_ms + ttl, token)
  keep(KEYS[4], ttl)
  keep(KEYS[5], ttl)
  keep(KEYS[6], ttl)
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then
  return {0, math.max(0, tonumber(first[2]) - now_ms)}
end
return {0, -1}
