-- Append one record to a table's chat stream (never the game's stream), compare-and-set on the chat
-- head and on the game's version the record names, and wake the game's live streams.
-- KEYS[1] the chat stream, KEYS[2] the chat state hash (n, hash, messages, enabled),
-- KEYS[3] the game's events stream (read only: it exists, and its head version)
-- ARGV[1] the live channel, ARGV[2] the chat head n the record follows, ARGV[3] that head's hash,
-- ARGV[4] the game version the record names, ARGV[5] 'message' or 'settings',
-- ARGV[6] the cap on messages, ARGV[7] the record's bytes, ARGV[8] its chain hash,
-- ARGV[9] for settings: '1' chat on, '0' off
local top = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
if #top == 0 then
  return {'no_game'}
end
local version = string.match(top[1][1], '^0%-(%d+)$')
if version ~= ARGV[4] then
  return {'retry'}
end
local state = redis.call('HMGET', KEYS[2], 'n', 'hash', 'messages', 'enabled')
local n = tonumber(state[1] or '0')
local head = state[2] or ''
if tostring(n) ~= ARGV[2] or head ~= ARGV[3] then
  return {'retry'}
end
if ARGV[5] == 'message' then
  if state[4] == '0' then
    return {'chat_off'}
  end
  if tonumber(state[3] or '0') >= tonumber(ARGV[6]) then
    return {'chat_full'}
  end
end
local next_n = n + 1
redis.call('XADD', KEYS[1], '0-' .. next_n, 'd', ARGV[7], 'h', ARGV[8])
redis.call('HSET', KEYS[2], 'n', next_n, 'hash', ARGV[8])
if ARGV[5] == 'message' then
  redis.call('HINCRBY', KEYS[2], 'messages', 1)
else
  redis.call('HSET', KEYS[2], 'enabled', ARGV[9])
end
redis.call('SPUBLISH', ARGV[1], 'chat')
return {'ok', tostring(next_n)}
