-- A retried command's record, written again unchanged (KEYS[1] seat_commands, ARGV[1] its scoped
-- field; KEYS[2] the legacy commands hash, ARGV[2] the bare id): a write of this connection's, so
-- that the WAIT/WAITAOF after this reply covers the original record and its events, and a retry is
-- answered only once the replicas have what the first try wrote. Replies 1, or 0 without a record.
local prior = redis.call('HGET', KEYS[1], ARGV[1])
if prior then
  redis.call('HSET', KEYS[1], ARGV[1], prior)
  return 1
end
if ARGV[2] ~= '' then
  prior = redis.call('HGET', KEYS[2], ARGV[2])
  if prior then
    redis.call('HSET', KEYS[2], ARGV[2], prior)
    return 1
  end
end
return 0
