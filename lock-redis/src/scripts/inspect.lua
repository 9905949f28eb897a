-- Inspect (read only): what an operator sees of one lock on this server.
-- KEYS[1] lock key ('OWNER_TOKEN GRANTED_MS LABEL'), KEYS[2] fence counter, KEYS[3] waiter
-- expiries (zset: waiter -> time after which it is dropped unless it refreshes).
-- Returns {value or nil, PTTL of the lock key, fence counter or nil, waiters}: waiters are the
-- entries whose expiry is still ahead (queued and polling waiters alike). Only grants raise the
-- counter, so while the key is held it is the holder's fencing token.
local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
return {
  redis.call('GET', KEYS[1]),
  redis.call('PTTL', KEYS[1]),
  redis.call('GET', KEYS[2]),
  redis.call('ZCOUNT', KEYS[3], '(' .. string.format('%d', now_ms), '+inf'),
}
