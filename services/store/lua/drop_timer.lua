-- Disarm a game's timer armed at one version, if it still is (a timer job that cannot play what its
-- timer calls for: without this the timer loop would queue it again and again). Nothing else is
-- touched: a timer armed for a newer version meanwhile (an append) stays as it is.
-- KEYS[1] timer hash; ARGV[1] the game's live channel ('timer' is published on it when the timer
-- changes), ARGV[2] version.
-- The timer is one field, 't', packed as in append.lua (services.store.timer_record); a hash of the
-- fields written before reads the same and is replaced by the field here.
-- Replies 'dropped' or 'moved' (the timer belongs to another version, or has no deadline).
local TIMER_PARTS = {'version', 'deadline', 'kind', 'seats', 'turn_seconds'}
local function read_timer(key)
  local timer = {}
  local packed = redis.call('HGET', key, 't')
  if packed then
    local i = 1
    for part in string.gmatch(packed, '[^ ]+') do
      if part ~= '-' and TIMER_PARTS[i] then timer[TIMER_PARTS[i]] = part end
      i = i + 1
    end
    return timer, false
  end
  local flat = redis.call('HGETALL', key)
  for i = 1, #flat, 2 do timer[flat[i]] = flat[i + 1] end
  return timer, #flat > 0
end
local function pack_timer(timer)
  local parts, n = {}, 0
  for i, name in ipairs(TIMER_PARTS) do
    local part = timer[name]
    if part == nil or part == '' then part = '-' else n = i end
    parts[i] = part
  end
  return table.concat(parts, ' ', 1, n)
end
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
