-- Arm (or clear) a game's timer for the version just appended, never going back to an older one.
-- KEYS[1] timer hash
-- ARGV[1] the game's live channel ('timer' is published on it when the timer changes: views
-- cached in API processes show its clock), ARGV[2] version, ARGV[3] deadline in ms ('' clears the
-- timer), ARGV[4..] field, value pairs.
-- Replies 'armed', 'cleared' or 'stale' (the hash already holds this or a newer version).
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local version = tonumber(ARGV[2])
if current >= version then
  return 'stale'
end
redis.call('DEL', KEYS[1])
if ARGV[3] == '' then
  redis.call('HSET', KEYS[1], 'version', ARGV[2])
  redis.call('SPUBLISH', ARGV[1], 'timer')
  return 'cleared'
end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'deadline', ARGV[3], unpack(ARGV, 4))
redis.call('SPUBLISH', ARGV[1], 'timer')
return 'armed'
