-- Compare-and-set a game's projected views on their checkpoint (a missing checkpoint is 0): the
-- store's write_views; the projector writes the same way, with its indexes, in project_views.lua.
-- KEYS[1] views hash
-- ARGV[1] expected checkpoint, ARGV[2] new checkpoint, ARGV[3] live channel (a shard channel in the
-- game's slot), ARGV[4..] field, value pairs (none: the views are dropped, the checkpoint moves on).
-- Replies 'written' (fields and checkpoint set, new version published), 'stale' (the views are
-- already at or past the new checkpoint) or 'mismatch' (behind it, but not where expected).
--
-- Views are derived from the stream, so they are kept in memory only: written with replication
-- off (not in the append-only file, not sent to replicas), the old fields dropped, and the version
-- they hold in 'at'. Only the checkpoint is written durably. After a restart or a failover the
-- hash holds the durable checkpoint and either no fields or older ones from a snapshot, whose
-- 'at' differs from it: readers take fields only where 'at' equals the checkpoint
-- (services.store.operations.valid_views), and render the rest from the events.
local current = tonumber(redis.call('HGET', KEYS[1], 'checkpoint') or '0')
local new = tonumber(ARGV[2])
local replicated = redis.set_repl ~= nil  -- fakeredis (unit tests) has none, and nothing to replicate
if current == tonumber(ARGV[1]) then
  if replicated then redis.set_repl(redis.REPL_NONE) end
  redis.call('DEL', KEYS[1])
  if #ARGV > 3 then
    redis.call('HSET', KEYS[1], 'at', ARGV[2], unpack(ARGV, 4))
  end
  if replicated then redis.set_repl(redis.REPL_ALL) end
  redis.call('HSET', KEYS[1], 'checkpoint', ARGV[2])
  redis.call('SPUBLISH', ARGV[3], ARGV[2])
  return 'written'
end
if current >= new then
  return 'stale'
end
return 'mismatch'
