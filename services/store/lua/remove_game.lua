-- Remove an abandoned or expired game (services.store.retention.remove_game), in one atomic step of
-- its slot, only if nothing moved since the sweeper picked it.
-- KEYS[1] events stream, KEYS[2] views hash, KEYS[3] pending-projection flag, KEYS[4..] the game's
-- other keys (deleted with these three).
-- ARGV[1] the head version the sweeper saw when it picked the game (its views were at that head).
-- Replies 1 when removed; else 0: the head moved (an append, acknowledged or not yet projected), the
-- views are not at that head, a projection is pending, or the game is finished.
-- Every read and check comes before the first write.
local expected = tonumber(ARGV[1])
local head = 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #top > 0 then
  head = tonumber(string.match(top[1][1], '^0%-(%d+)$'))
  if head == nil then
    return redis.error_reply('ts: stream head ' .. top[1][1] .. ' is not a version id')
  end
end
if head ~= expected then
  return 0
end
if tonumber(redis.call('HGET', KEYS[2], 'checkpoint') or '0') ~= expected then
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
-- a finished game is history, kept for ever: its finish is among the last entries of its stream
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 16)
for _, entry in ipairs(last) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'd' and string.find(fields[i + 1], '{"type":"game_finished"', 1, true) then
      return 0
    end
  end
end
redis.call('DEL', unpack(KEYS))
return 1
