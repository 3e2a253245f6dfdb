-- The hand-over of a game to the projection consumers when the indexes live apart from the game (a
-- cluster: this runs on the queue's server, services.store.operations.publish_appended); on one
-- server append.lua does the same in its own step.
-- KEYS[1] dirty set, KEYS[2] hand-over stream, KEYS[3] timer deadline index
-- ARGV[1] game id, ARGV[2] now (ms), ARGV[3] '1' to hand the game over (its append set its pending
-- flag), ARGV[4] the deadline the append armed ('' = none), ARGV[5] the most entries the stream holds.
-- The dirty mark and the timer index are durable (the sweeper and the timer loop read them after a
-- restart); the hand-over is memory only: a consumer blocks on the stream with XREAD (a read), and
-- after a restart the dirty set says what to project again. A stream at its bound takes no more
-- (the game stays marked: the sweeper projects it). Replies 1 when the game was handed over.
redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[3], 'LT', ARGV[4], ARGV[1])
end
if ARGV[3] ~= '1' or redis.call('XLEN', KEYS[2]) >= tonumber(ARGV[5]) then
  return 0
end
local replicated = redis.set_repl ~= nil  -- fakeredis (unit tests) has none, and nothing to replicate
if replicated then redis.set_repl(redis.REPL_NONE) end
redis.call('XADD', KEYS[2], '*', 'g', ARGV[1])
if replicated then redis.set_repl(redis.REPL_ALL) end
return 1
