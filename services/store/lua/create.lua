-- Start a game: store its secret and its create batch (versions 1..n) together, or nothing at all.
-- KEYS[1] events stream, KEYS[2] secret hash, KEYS[3] the game's pending-projection flag
-- ARGV[1] n, the number of entries; ARGV[2] the pending flag's time to live (ms);
-- ARGV[3..2n+2] data, hash pairs for versions 1..n; ARGV[2n+3..] secret field, value pairs.
-- Replies 1 when created (the pending flag is then set, in memory only as append.lua does: the caller
-- hands the game to the projection consumers), 0 when the stream already exists (nothing is written).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local n = tonumber(ARGV[1])
if #ARGV > 2 * n + 2 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 2 * n + 3))
end
for i = 1, n do
  redis.call('XADD', KEYS[1], '0-' .. i, 'd', ARGV[2 * i + 1], 'h', ARGV[2 * i + 2])
end
local replicated = redis.set_repl ~= nil  -- fakeredis (unit tests) has none, and nothing to replicate
if replicated then redis.set_repl(redis.REPL_NONE) end
redis.call('SET', KEYS[3], n, 'PX', ARGV[2])
if replicated then redis.set_repl(redis.REPL_ALL) end
return 1
