-- The packed timer, shared by append.lua, arm_timer.lua and drop_timer.lua (each names it with a
-- line "-- include: timer_record", which services.store.requests puts this file's text in place of):
-- one field 't' of the timer hash, "<version> <deadline> <kind> <seats> <turn_seconds>", '-' for a
-- part not set (services.store.timer_record reads it in Python); a hash of the five fields written
-- before reads the same (its second value: true) and is replaced by the field on the next write.
local TIMER_PARTS = {'version', 'deadline', 'kind', 'seats', 'turn_seconds'}
local TIMER_PLANNED = {kind = true, seats = true, turn_seconds = true}
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
