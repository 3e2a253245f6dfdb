-- One event of a dispute, appended if the dispute's stream still ends where the caller read it.
-- KEYS[1] the dispute's stream, KEYS[2] the game's disputes index (zset: dispute id -> opened at).
-- ARGV[1] the number of events read (0: the dispute is being opened), ARGV[2] the event's bytes,
-- ARGV[3] the dispute id, ARGV[4] ms since the epoch. Replies 1 appended, 0 the stream moved.
local length = redis.call('XLEN', KEYS[1])
if length ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('XADD', KEYS[1], '0-' .. (length + 1), 'd', ARGV[2])
if length == 0 then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
end
return 1
