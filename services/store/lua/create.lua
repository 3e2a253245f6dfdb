-- Start a game: store its secret and its first event (version 1) together, or nothing at all.
-- KEYS[1] events stream, KEYS[2] secret hash
-- ARGV[1] data, ARGV[2] hash of the first event, ARGV[3..] secret field, value pairs.
-- Replies 1 when created, 0 when the stream already exists (nothing is written then).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if #ARGV > 2 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 3))
end
redis.call('XADD', KEYS[1], '0-1', 'd', ARGV[1], 'h', ARGV[2])
return 1
