-- Compare-and-delete: remove KEYS[1] only if it still holds our token ARGV[1].
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
