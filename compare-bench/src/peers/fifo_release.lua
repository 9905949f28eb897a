-- Compare-and-delete for the FIFO lock: remove KEYS[1] only if it still holds our token
-- ARGV[1], and report whether a waiter queue (KEYS[2]) exists, which a FIFO release must learn
-- to wake its head. Returns 1 released, 2 released with waiters in line, 0 not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1 + redis.call('EXISTS', KEYS[2])
end
return 0
