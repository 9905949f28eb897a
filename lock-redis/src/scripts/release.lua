-- Release (also: leave the waiter queue): delete the lock only if it holds our token, drop our
-- queue entry, and when either freed the way for someone, wake the first queued waiter alone:
-- publish its token on its service's inbox, ARGV[2] .. SERVICE (the token's first 16 hex
-- digits name its service), or, when ARGV[2] is '' (a cluster, where a script publishes only
-- on its lock's slot), on the waiter's own channel, KEYS[2] .. ':' .. TOKEN. The waiters
-- behind it hear nothing: a release costs one message however many wait.
-- When the first waiter left its grant terms (acquire.lua's ARGV[8]), the release also grants it
-- the lock in the same step, as its own acquire would have (its token, the server time and its
-- label, its lease, the next fence), and the message carries 'TOKEN FENCE': the waiter holds
-- the lock without another round trip. Waiters whose entries expired are dropped first, so no
-- grant goes to a waiter that stopped refreshing.
-- KEYS[1] lock key ('OWNER_TOKEN GRANTED_MS LABEL'), KEYS[2] the prefix of the waiters' own
-- channels, KEYS[3] waiter queue, KEYS[4] waiter expiries, KEYS[5] queued waiters' grant terms
-- (hash: token -> 'LEASE_MS LABEL'), KEYS[6] fence counter.
-- ARGV[1] owner token. ARGV[2] the inbox channel prefix, or ''. ARGV[3] (optional) a polling
-- waiter's id whose count to drop as well.
-- Returns {1, receivers} when the lock was ours and is deleted (receivers 0 when no waiter is
-- queued and nothing was published), {0, 0} when it was not ours
-- (nothing of anyone else's changed).
-- Fast path: no queue key means no waiter is queued, so there is no entry to drop and nobody
-- to name in a wake-up: compare-and-delete, and no PUBLISH. Waiters join the queue in the
-- acquire script run that finds the lock taken, before they sleep, so none can miss this
-- release; a waiter whose entry expired unrefreshed is past its own fallback timer and tries
-- again on its own.
-- The owner token is fixed-length, so the value is ours when it starts with it and a space.
local function ours()
  local value = redis.call('GET', KEYS[1])
  return value and string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' '
end
if ARGV[3] then
  redis.call('ZREM', KEYS[4], ARGV[3])
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  if ours() then
    redis.call('DEL', KEYS[1])
    return {1, 0}
  end
  return {0, 0}
end
local function drop(waiters)
  redis.call('ZREM', KEYS[3], unpack(waiters))
  redis.call('ZREM', KEYS[4], unpack(waiters))
  redis.call('HDEL', KEYS[5], unpack(waiters))
end
-- A holder has no queue entry: every grant to a queued waiter drops its entries in the same
-- step, and tokens are never reused. So only a caller that does not hold the lock leaves it.
local mine = ours()
local left = 0
if mine then
  redis.call('DEL', KEYS[1])
else
  left = redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
  redis.call('HDEL', KEYS[5], ARGV[1])
end
-- The first waiter that still refreshes its entry (as acquire.lua finds it), granted the lock
-- when it left its terms: the message to send it.
local function hand_over(head)
  local clock = redis.call('TIME')
  local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
  local now_ms = math.floor(now_us / 1000)
  -- Waiters ahead that stopped refreshing (expiry passed, or no expiry entry at all: the
  -- expiry set was evicted) are dropped one by one; those further back wait for their turn.
  local function stale(waiter)
    local expiry = redis.call('ZSCORE', KEYS[4], waiter)
    return not expiry or tonumber(expiry) <= now_ms
  end
  while head and stale(head) do
    drop({head})
    head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
  end
  if not head then
    return nil, nil
  end
  local terms = redis.call('HGET', KEYS[5], head)
  if not terms then
    return head, head
  end
  local space = string.find(terms, ' ', 1, true)
  local lease, label = string.sub(terms, 1, space - 1), string.sub(terms, space + 1)
  local value = head .. ' ' .. string.format('%d', now_ms) .. ' ' .. label
  redis.call('SET', KEYS[1], value, 'PX', lease)
  local fence = math.max(tonumber(redis.call('GET', KEYS[6]) or '0') + 1, now_us)
  redis.call('SET', KEYS[6], string.format('%d', fence))
  drop({head})
  return head, head .. ' ' .. string.format('%d', fence)
end
local receivers = 0
if mine or (left == 1 and redis.call('EXISTS', KEYS[1]) == 0) then
  local head, message = hand_over(redis.call('ZRANGE', KEYS[3], 0, 0)[1])
  if head then
    local channel = KEYS[2] .. ':' .. head
    if ARGV[2] ~= '' then
      channel = ARGV[2] .. string.sub(head, 1, 16)
    end
    receivers = redis.call('PUBLISH', channel, message)
  end
end
if mine then
  return {1, receivers}
end
return {0, 0}
