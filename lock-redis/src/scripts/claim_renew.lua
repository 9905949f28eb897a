-- Renew a shared claim: extend this holder's lease only if it still holds (its lease has not
-- ended by the server clock).
-- KEYS[1] holders, KEYS[2] holder info, KEYS[3] the semaphore limit.
-- ARGV[1] owner token, ARGV[2] lease ms.
-- Returns 1 when extended, 0 when the token no longer holds.
local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local ends = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not ends or tonumber(ends) <= now_ms then
  return 0
end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', now_ms + lease, ARGV[1])
for _, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or (ttl >= 0 and ttl < lease) then
    redis.call('PEXPIRE', key, lease)
  end
end
return 1
