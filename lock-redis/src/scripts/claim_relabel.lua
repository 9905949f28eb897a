-- Replace a holder's label (an election leader's published value) while its lease lasts,
-- and announce the change on the object's channel.
-- KEYS[1] holders, KEYS[2] holder info ('CLAIM FENCE GRANTED_MS LABEL'), KEYS[3] channel.
-- ARGV[1] owner token, ARGV[2] the new label.
-- Returns 1 when replaced, 0 when the token no longer holds.
local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local ends = redis.call('ZSCORE', KEYS[1], ARGV[1])
local info = redis.call('HGET', KEYS[2], ARGV[1])
if not ends or tonumber(ends) <= now_ms or not info then
  return 0
end
local head = string.match(info, '^%S+ %S+ %S+')
redis.call('HSET', KEYS[2], ARGV[1], head .. ' ' .. ARGV[2])
redis.call('PUBLISH', KEYS[3], '')
return 1
