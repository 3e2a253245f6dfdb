-- The checks remove_game.lua and archive_game.lua share (each names them with a line
-- "-- include: game_checks", which services.store.requests puts this file's text in place of), on
-- the keys both take: KEYS[1] events stream, KEYS[2] views hash, KEYS[3] pending-projection flag,
-- KEYS[4] the game's disputes index (services.store.disputes), KEYS[5..4+n] the streams of the n
-- disputes the caller read in that index.

-- The stream's head version (0 when it is empty).
local function stream_head()
  local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #top == 0 then
    return 0
  end
  local head = tonumber(string.match(top[1][1], '^0%-(%d+)$'))
  if head == nil then
    error({err = 'ts: stream head ' .. top[1][1] .. ' is not a version id'})
  end
  return head
end

-- Nothing moved since the caller read the game: its head is still `expected`, its views are at
-- that head and no projection is pending.
local function unmoved(expected)
  return stream_head() == expected
    and tonumber(redis.call('HGET', KEYS[2], 'checkpoint') or '0') == expected
    and redis.call('EXISTS', KEYS[3]) == 0
end

-- The game is finished: its finish is among the last entries of its stream.
local function finished()
  for _, entry in ipairs(redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 16)) do
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'd' and string.find(fields[i + 1], '{"type":"game_finished"', 1, true) then
        return true
      end
    end
  end
  return false
end

-- Every dispute the game has is among the n the caller read (none was opened since), and each is
-- resolved (a resolution is a dispute's last event): an open dispute's evidence, the stream, stays.
local function disputes_resolved(n)
  if redis.call('ZCARD', KEYS[4]) ~= n then
    return false
  end
  for i = 5, 4 + n do
    local tail = redis.call('XREVRANGE', KEYS[i], '+', '-', 'COUNT', 1)
    if #tail == 0 then
      return false
    end
    local resolved = false
    local fields = tail[1][2]
    for j = 1, #fields, 2 do
      if fields[j] == 'd' and string.find(fields[j + 1], '{"type":"dispute_resolved"', 1, true) == 1 then
        resolved = true
      end
    end
    if not resolved then
      return false
    end
  end
  return true
end
