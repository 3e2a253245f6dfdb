-- Disarm a game's timer armed at one version, if it still is (a timer job that cannot play what its
-- timer calls for: without this the timer loop would queue it again and again). Nothing else is
-- touched: a timer armed for a newer version meanwhile (an append) stays as it is.
-- KEYS[1] timer hash; ARGV[1] the game's live channel ('timer' is published on it when the timer
-- changes), ARGV[2] version.
-- Replies 'dropped' or 'moved' (the timer belongs to another version, or has no deadline).
local current = redis.call('HGET', KEYS[1], 'version')
if current ~= ARGV[2] or redis.call('HEXISTS', KEYS[1], 'deadline') == 0 then
  return 'moved'
end
redis.call('HDEL', KEYS[1], 'deadline')
redis.call('SPUBLISH', ARGV[1], 'timer')
return 'dropped'
