-- Arm (or clear) a game's timer for the version just appended, never going back to an older one.
-- KEYS[1] timer hash
-- ARGV[1] version, ARGV[2] deadline in ms ('' clears the timer), ARGV[3..] field, value pairs.
-- Replies 'armed', 'cleared' or 'stale' (the hash already holds this or a newer version).
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
local version = tonumber(ARGV[1])
if current >= version then
  return 'stale'
end
redis.call('DEL', KEYS[1])
if ARGV[2] == '' then
  redis.call('HSET', KEYS[1], 'version', ARGV[1])
  return 'cleared'
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'deadline', ARGV[2], unpack(ARGV, 3))
return 'armed'
