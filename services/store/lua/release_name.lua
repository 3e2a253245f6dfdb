-- Give a claimed name back, but only if the given account still holds it.
-- KEYS[1] the name's claim key, ARGV[1] the account id. Replies 1 when released, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
