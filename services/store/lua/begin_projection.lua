-- A projection of a game begins (services.store.operations.begin_projection): claim the game's
-- hand-over by clearing its pending flag, then read the views' checkpoint, the timer and the stream's
-- tail, in one call. The flag is memory only (append.lua sets it with replication off), and so is its
-- clearing here: neither goes to the append-only file nor to replicas, so a projection writes nothing
-- durable to begin.
-- KEYS[1] the pending flag, KEYS[2] views hash, KEYS[3] timer hash, KEYS[4] events
-- ARGV[1] the checkpoint's field, ARGV[2] the tail's exclusive XRANGE start ('(0-<version>'),
-- ARGV[3] the most entries to read.
-- Replies {claimed, checkpoint, timer (field, value, ...), tail entries}: claimed is 1 when this call
-- cleared the flag (the game was handed over and no other projection has taken it since), else 0.
local replicated = redis.set_repl ~= nil  -- fakeredis (unit tests) has none, and nothing to replicate
if replicated then redis.set_repl(redis.REPL_NONE) end
local claimed = redis.call('DEL', KEYS[1])
if replicated then redis.set_repl(redis.REPL_ALL) end
local checkpoint = redis.call('HGET', KEYS[2], ARGV[1])
local timer = redis.call('HGETALL', KEYS[3])
local tail = redis.call('XRANGE', KEYS[4], ARGV[2], '+', 'COUNT', ARGV[3])
return {claimed, checkpoint, timer, tail}
