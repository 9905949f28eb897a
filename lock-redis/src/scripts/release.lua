-- Release (also: leave the waiter queue): delete the lock only if it holds our token, drop our
-- queue entry, and when either freed the way for someone, wake the first queued waiter alone:
-- publish its token on its service's inbox, ARGV[2] .. SERVICE (the token's first 16 hex
-- digits name its service), or, when ARGV[2] is '' (a cluster, where a script publishes only
-- on its lock's slot), on the waiter's own channel, KEYS[2] .. ':' .. TOKEN. The waiters
-- behind it hear nothing: a release costs one message however many wait.
-- KEYS[1] lock key ('OWNER_TOKEN GRANTED_MS LABEL'), KEYS[2] the prefix of the waiters' own
-- channels, KEYS[3] waiter queue, KEYS[4] waiter expiries.
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
local mine = ours()
if mine then
  redis.call('DEL', KEYS[1])
end
local left = redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
local receivers = 0
if mine or (left == 1 and redis.call('EXISTS', KEYS[1]) == 0) then
  local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
  if head then
    local channel = KEYS[2] .. ':' .. head
    if ARGV[2] ~= '' then
      channel = ARGV[2] .. string.sub(head, 1, 16)
    end
    receivers = redis.call('PUBLISH', channel, head)
  end
end
if mine then
  return {1, receivers}
end
return {0, 0}
