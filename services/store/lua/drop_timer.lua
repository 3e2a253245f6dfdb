-- Disarm a game's timer armed at one version, if it still is (a timer job that cannot play what its
-- timer calls for: without this the timer loop would queue it again and again). Nothing else is
-- touched: a timer armed for a newer version meanwhile (an append) stays as it is.
-- KEYS[1] timer hash; ARGV[1] the game's live channel ('timer' is published on it when the timer
-- changes), ARGV[2] version.
-- The timer is one field, 't', packed as in append.lua (services.store.timer_record); a hash of the
-- fields written before reads the same and is replaced by the field here.
-- Replies 'dropped' or 'moved' (the timer belongs to another version, or has no deadline).
-- include: timer_record
local timer, old_form = read_timer(KEYS[1])
if timer.version ~= ARGV[2] or timer.deadline == nil then
  return 'moved'
end
timer.deadline = nil
if old_form then
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 't', pack_timer(timer))
redis.call('SPUBLISH', ARGV[1], 'timer')
return 'dropped'
