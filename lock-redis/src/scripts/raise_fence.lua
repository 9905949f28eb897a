-- Raise fence (Redlock): lift a master's fencing counter to at least ARGV[1], so the next grant
-- on any majority that overlaps this one counts past it.
-- KEYS[1] fence counter. ARGV[1] the fencing token just handed out.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1
