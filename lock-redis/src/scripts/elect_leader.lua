-- Read an election's leader: the holder whose lease has not ended by the server clock, its
-- holder info and the election's term counter. Reads only.
-- KEYS[1] holders, KEYS[2] holder info, KEYS[3] term counter.
-- Returns {} while nobody leads, else {'CLAIM FENCE GRANTED_MS LABEL', term}.
local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now_ms, '+inf', 'LIMIT', 0, 1)
if #live == 0 then
  return {}
end
local info = redis.call('HGET', KEYS[2], live[1])
if not info then
  return {}
end
return {info, redis.call('GET', KEYS[3]) or '0'}
