-- The least fenced acquire: set KEYS[1] to the token ARGV[1] with a lease of ARGV[2] ms if it
-- is absent, and only then count the fence (KEYS[2]); 0 when the key was held.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
