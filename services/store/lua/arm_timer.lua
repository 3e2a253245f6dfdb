-- Arm (or clear) a game's timer for the version just appended, never going back to an older one.
-- KEYS[1] timer hash
-- ARGV[1] the game's live channel ('timer' is published on it when the timer changes: views
-- cached in API processes show its clock), ARGV[2] version, ARGV[3] deadline in ms ('' clears the
-- timer), ARGV[4..] field, value pairs (kind, seats, turn_seconds).
-- The timer is one field, 't', packed as in append.lua (services.store.timer_record); a hash of the
-- fields written before reads the same and is replaced by the field here.
-- Replies 'armed', 'cleared' or 'stale' (the hash already holds this or a newer version).
-- include: timer_record
local stored, old_form = read_timer(KEYS[1])
if tonumber(stored.version or '0') >= tonumber(ARGV[2]) then
  return 'stale'
end
local timer = {version = ARGV[2]}
if ARGV[3] ~= '' then
  timer.deadline = ARGV[3]
  for i = 4, #ARGV, 2 do
    local field, value = ARGV[i], ARGV[i + 1]
    if not TIMER_PLANNED[field] or value == '-' or string.find(value, ' ', 1, true) then
      return redis.error_reply('ts: timer field ' .. field .. ' = "' .. value .. '" cannot be stored')
    end
    timer[field] = value
  end
end
if old_form then
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 't', pack_timer(timer))
redis.call('SPUBLISH', ARGV[1], 'timer')
if ARGV[3] == '' then
  return 'cleared'
end
return 'armed'
