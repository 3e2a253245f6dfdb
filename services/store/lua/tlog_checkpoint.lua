-- Publish a signed checkpoint of the log (services.fairness.transparency.log), never going back in size.
-- KEYS: checkpoint (hash: size, note), checkpoints (hash: size -> first note at that size)
-- ARGV: size, note. Returns 1 when it became the latest, 0 when a larger one is already out.
local size = tonumber(ARGV[1])
local latest = tonumber(redis.call('HGET', KEYS[1], 'size') or '-1')
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
if latest > size then
  return 0
end
redis.call('HSET', KEYS[1], 'size', ARGV[1], 'note', ARGV[2])
return 1
