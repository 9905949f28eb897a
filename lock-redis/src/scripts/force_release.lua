-- Force release (an operator's): end the live hold only if its fencing token is ARGV[1], and
-- wake the first queued waiter exactly as a release does.
-- KEYS[1] lock key ('OWNER_TOKEN GRANTED_MS LABEL'), KEYS[2] fence counter, KEYS[3] the
-- prefix of the waiters' own channels, KEYS[4] waiter queue. ARGV[1] the fencing token, in
-- decimal. ARGV[2] the inbox channel prefix, or '' (see release.lua).
-- Returns 1 when that hold was live and is deleted, 0 otherwise (nothing changed). Only grants
-- raise the counter, so it names the live hold's token; a value not in our format belongs to a
-- plain SET NX client, whose key the counter says nothing about.
local value = redis.call('GET', KEYS[1])
if not value or not string.find(value, '^%x+ %d+ ') then
  return 0
end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
local head = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
if head then
  local channel = KEYS[3] .. ':' .. head
  if ARGV[2] ~= '' then
    channel = ARGV[2] .. string.sub(head, 1, 16)
  end
  redis.call('PUBLISH', channel, head)
end
return 1
