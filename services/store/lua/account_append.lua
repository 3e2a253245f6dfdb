-- Append events to an account's stream at exactly the expected version (0: the account is new).
-- KEYS[1] the account's events stream
-- ARGV[1] expected head version, ARGV[2..] the encoded events for versions expected+1, ...
-- Replies {'ok', last} | {'conflict', head}. Every read and check comes before the first write.
local head = 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #top > 0 then
  head = tonumber(string.match(top[1][1], '^0%-(%d+)$'))
  if head == nil then
    return redis.error_reply('ts: stream head ' .. top[1][1] .. ' is not a version id')
  end
end
local expected = tonumber(ARGV[1])
if head ~= expected then
  return {'conflict', tostring(head)}
end
if #ARGV < 2 then
  return redis.error_reply('ts: an account append needs at least one event')
end
for i = 2, #ARGV do
  redis.call('XADD', KEYS[1], '0-' .. (expected + i - 1), 'd', ARGV[i])
end
return {'ok', tostring(expected + #ARGV - 1)}
