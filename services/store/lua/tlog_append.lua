-- Append one batch to the public log of game heads (services.fairness.transparency.log), all or nothing.
-- KEYS: leaves, nodes, leafset, heads, games, scanned, pending (all of the {tlog} slot)
-- ARGV[1]: the tree size the batch was computed against; ARGV[2]: n leaves; ARGV[3]: n nodes;
-- ARGV[4]: n games scanned; then n leaves as (data, leaf hash, "<game>:<version>", game id),
-- n nodes as (field, hash), n games as (game id, scanned version).
-- Returns the new size, or -1 when the tree is no longer at ARGV[1] (another appender went first:
-- the caller reads again). The leaf set and the heads only change with the size, so a batch
-- computed at the current size has none of its leaves logged yet: nothing is ever appended twice.
local size = tonumber(ARGV[1])
if redis.call('LLEN', KEYS[1]) ~= size then
  return -1
end
local n_leaves, n_nodes, n_games = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local at = 5
for i = 0, n_leaves - 1 do
  local data, digest, head, game = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  at = at + 4
  local index = size + i
  redis.call('RPUSH', KEYS[1], data)
  redis.call('HSET', KEYS[3], digest, index)
  redis.call('HSET', KEYS[4], head, index)
  local known = redis.call('HGET', KEYS[5], game)
  if known then
    redis.call('HSET', KEYS[5], game, known .. ' ' .. index)
  else
    redis.call('HSET', KEYS[5], game, tostring(index))
  end
end
for i = 0, n_nodes - 1 do
  redis.call('HSET', KEYS[2], ARGV[at], ARGV[at + 1])
  at = at + 2
end
for i = 0, n_games - 1 do
  local game, version = ARGV[at], tonumber(ARGV[at + 1])
  at = at + 2
  local before = tonumber(redis.call('HGET', KEYS[6], game) or '0')
  if version > before then
    redis.call('HSET', KEYS[6], game, version)
  end
  local wanted = redis.call('ZSCORE', KEYS[7], game)
  if wanted and tonumber(wanted) <= version then
    redis.call('ZREM', KEYS[7], game)
  end
end
return size + n_leaves
