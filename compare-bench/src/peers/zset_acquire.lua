-- KEYS[1] the semaphore's sorted set; ARGV[1] token, ARGV[2] limit, ARGV[3] timeout in ms.
-- The usual hand-written Redis semaphore: drop holders older than the timeout, then take a
-- place if fewer than the limit hold. Returns 1 when granted.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('ZADD', KEYS[1], now, ARGV[1])
    return 1
end
return 0
