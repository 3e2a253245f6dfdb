-- Remove a finished game's keys once its archive file is written (services.store.archive), in one
-- atomic step of its slot, only if nothing moved since the archiver read what it wrote.
-- KEYS[1] events stream, KEYS[2] views hash, KEYS[3] pending-projection flag, KEYS[4] the game's
-- disputes index (services.store.disputes), KEYS[5..4+ARGV[2]] the streams of the disputes the
-- archiver read in that index, KEYS[5+ARGV[2]..] the game's other keys moved to the archive.
-- ARGV[1] the head version the archive file holds, ARGV[2] how many disputes the archiver read.
-- Replies 1 when removed; else 0: the head moved, the views are not at that head, a projection is
-- pending, the game is not finished, a dispute was opened since the index was read, or a dispute
-- is still open. The disputes (index and streams), the tokens and the chat stay in Redis: they are
-- small, and their own code reads and writes them there.
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
if head == 0 or head ~= expected then
  return 0
end
if tonumber(redis.call('HGET', KEYS[2], 'checkpoint') or '0') ~= expected then
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
-- only a finished game is archived: its finish is among the last entries of its stream
local finished = false
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 16)
for _, entry in ipairs(last) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'd' and string.find(fields[i + 1], '{"type":"game_finished"', 1, true) then
      finished = true
    end
  end
end
if not finished then
  return 0
end
local disputes = tonumber(ARGV[2])
if redis.call('ZCARD', KEYS[4]) ~= disputes then
  return 0
end
for i = 5, 4 + disputes do
  local tail = redis.call('XREVRANGE', KEYS[i], '+', '-', 'COUNT', 1)
  if #tail == 0 then
    return 0
  end
  local resolved = false
  local fields = tail[1][2]
  for j = 1, #fields, 2 do
    if fields[j] == 'd' and string.find(fields[j + 1], '{"type":"dispute_resolved"', 1, true) == 1 then
      resolved = true
    end
  end
  if not resolved then
    return 0
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
for i = 5 + disputes, #KEYS do
  redis.call('DEL', KEYS[i])
end
return 1
