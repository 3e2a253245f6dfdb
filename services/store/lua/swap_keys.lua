-- Replace the service's signing key ring, but only if it is still the one the caller read (a
-- rotation racing another one loses instead of dropping a key). KEYS[1] the ring's key, ARGV[1] the
-- ring as read, ARGV[2] the new ring. Replies 1 when replaced, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0
