-- Renew: extend the lease only if the lock still holds our token.
-- KEYS[1] lock key ('OWNER_TOKEN GRANTED_MS LABEL'). ARGV[1] owner token, ARGV[2] lease in ms.
-- Returns 1 when extended, 0 when the lock is not ours any more.
local value = redis.call('GET', KEYS[1])
if value and string.sub(value, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
