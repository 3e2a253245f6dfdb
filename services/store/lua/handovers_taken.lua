-- A projection consumer has read the hand-over stream up to ARGV[1] (services.store.indexes
-- .handovers_taken): when that is the stream's last entry, the stream is dropped, in memory only (it
-- never is in the append-only file: append.lua and handover.lua add to it with replication off). A
-- stream that got more since is left whole: the next consumer to catch up drops it. The ids of a
-- stream made again go on from the server's clock, past those read before. Another consumer that
-- had not read as far loses nothing it must do: the one that read them claims the games.
-- KEYS[1] hand-over stream. Replies 1 when the stream was dropped.
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last == 0 or last[1][1] ~= ARGV[1] then
  return 0
end
local replicated = redis.set_repl ~= nil  -- fakeredis (unit tests) has none, and nothing to replicate
if replicated then redis.set_repl(redis.REPL_NONE) end
redis.call('DEL', KEYS[1])
if replicated then redis.set_repl(redis.REPL_ALL) end
return 1
