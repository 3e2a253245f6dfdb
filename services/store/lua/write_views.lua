-- Compare-and-set a game's projected views on their checkpoint (a missing checkpoint is 0).
-- KEYS[1] views hash
-- ARGV[1] expected checkpoint, ARGV[2] new checkpoint, ARGV[3] live channel (a shard channel in the game's slot), ARGV[4..] field, value pairs.
-- Replies 'written' (fields and checkpoint set, new version published), 'stale' (the views are
-- already at or past the new checkpoint) or 'mismatch' (behind it, but not where expected).
local current = tonumber(redis.call('HGET', KEYS[1], 'checkpoint') or '0')
local new = tonumber(ARGV[2])
if current == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'checkpoint', ARGV[2], unpack(ARGV, 4))
  redis.call('SPUBLISH', ARGV[3], ARGV[2])
  return 'written'
end
if current >= new then
  return 'stale'
end
return 'mismatch'
