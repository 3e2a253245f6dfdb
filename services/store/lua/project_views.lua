-- A projection's whole write, in one call (services.store.operations.project_views): the views
-- compare-and-set on their checkpoint (as write_views.lua), and, when the global indexes live on
-- this server (not a cluster: their keys are then passed), what follows it in the indexes.
-- KEYS[1] views hash, KEYS[2] events stream; with the indexes here also KEYS[3] dirty set,
-- KEYS[4] lobby, KEYS[5] lobby order, KEYS[6] lobby sequence, KEYS[7] waiting tables, KEYS[8] timers,
-- KEYS[9] activity, KEYS[10] expired tables, KEYS[11] the public log's pending games, KEYS[12] the
-- tables to list first (an established account created them: their first ordinal gets FIRST added,
-- and what is published of them says "first":true).
-- ARGV[1] expected checkpoint, ARGV[2] new checkpoint ('': nothing to write, the views are current),
-- ARGV[3] live channel (a shard channel in the game's slot), ARGV[4] n, the number of view fields,
-- ARGV[5 .. 4+2n] field, value pairs (none with a new checkpoint: the views are dropped, the
-- checkpoint moves on); then, from i = 5+2n: ARGV[i] game id, ARGV[i+1] the version the projector
-- folded to, ARGV[i+2] '1' when the game's lifecycle is pending at that version (its dirty mark is
-- then kept at it), ARGV[i+3] lobby summary ('': none), ARGV[i+4] '1' when the table no longer
-- waits for players, ARGV[i+5] the armed timer's deadline (''), ARGV[i+6] the retention index kind
-- ('': none, 'active', 'expired', 'kept': services.store.retention.activity_calls), ARGV[i+7] now
-- (ms), ARGV[i+8] the lobby's channel, ARGV[i+9] a head version to note for the public log (''), ARGV[i+10]
-- how old (ms) a game's activity time may grow before a projection writes it again.
-- Replies {outcome, checkpoint, indexed}: outcome 'written', 'current' (nothing asked to write),
-- 'stale' (the views are at or past the new checkpoint) or 'mismatch' (behind it, not where
-- expected: nothing else done, the caller folds again); checkpoint, the views' checkpoint after the
-- call; indexed, 1 when the indexes were brought up to date here (dirty mark cleared: 2), else 0.
-- What a move costs here is memory only (replication off: not in the append-only file, not sent to
-- replicas): the views with their checkpoint and the dirty mark's clearing; a game's activity time is
-- written (durably) only once it is ARGV[i+10] ms old, not by every move. Durable, as they must survive a restart: the
-- public log's note, the lobby, the waiting tables, the retention indexes when the game's kind
-- changes, the timer index's repairs and a dirty mark set again. After a restart or a failover the
-- dirty marks the append scripts wrote durably come back, and with them the games to project again
-- (the views are not trusted meanwhile: append.lua, operations.valid_views).
local FIRST = 17592186044416  -- 2^44, services.store.keys.LOBBY_FIRST_ORDER
local replicated = redis.set_repl ~= nil  -- fakeredis (unit tests) has none, and nothing to replicate
local function memory_only(...)  -- one write kept out of the append-only file and the replicas
  if replicated then redis.set_repl(redis.REPL_NONE) end
  local reply = redis.call(...)
  if replicated then redis.set_repl(redis.REPL_ALL) end
  return reply
end
local n = tonumber(ARGV[4])
local i = 5 + 2 * n
local here = #KEYS > 2
local game = ARGV[i]
if here and ARGV[i + 9] ~= '' then  -- before the write: a projection that dies after it noted the head
  redis.call('ZADD', KEYS[11], 'GT', ARGV[i + 9], game)
end
local current = tonumber(redis.call('HGET', KEYS[1], 'checkpoint') or '0')
local outcome = 'current'
if ARGV[2] ~= '' then
  local new = tonumber(ARGV[2])
  if current == tonumber(ARGV[1]) then
    if replicated then redis.set_repl(redis.REPL_NONE) end  -- views live in memory only: write_views.lua
    redis.call('DEL', KEYS[1])
    if n > 0 then
      redis.call('HSET', KEYS[1], 'at', ARGV[2], unpack(ARGV, 5, 4 + 2 * n))
    end
    redis.call('HSET', KEYS[1], 'checkpoint', ARGV[2])
    if replicated then redis.set_repl(redis.REPL_ALL) end
    redis.call('SPUBLISH', ARGV[3], ARGV[2])
    outcome, current = 'written', new
  elseif current >= new then
    outcome = 'stale'
  else
    return {'mismatch', current, 0}
  end
end
if not here then
  return {outcome, current, 0}
end
local now = ARGV[i + 7]
if outcome == 'written' then
  local summary = ARGV[i + 3]
  if summary ~= '' then  -- the lobby (services.store.indexes.after_projection)
    local before = redis.call('HGET', KEYS[4], game)
    redis.call('HSET', KEYS[4], game, summary)
    local order = tonumber(redis.call('ZSCORE', KEYS[5], game))
    if not order then
      order = redis.call('INCR', KEYS[6])
      if redis.call('ZREM', KEYS[12], game) == 1 then
        order = order + FIRST
      end
      redis.call('ZADD', KEYS[5], 'NX', order, game)
    end
    local unversioned = '"version":%-?%d+'
    if not before or string.gsub(before, unversioned, '') ~= string.gsub(summary, unversioned, '') then
      if order >= FIRST then
        summary = '{"first":true,' .. string.sub(summary, 2)
      end
      redis.call('PUBLISH', ARGV[i + 8], summary)
    end
  end
  if ARGV[i + 4] == '1' then
    redis.call('ZREM', KEYS[7], game)
  end
  local kind = ARGV[i + 6]
  if kind == 'kept' then
    redis.call('ZREM', KEYS[9], game)
    redis.call('ZREM', KEYS[10], game)
  elseif kind == 'expired' then
    redis.call('ZREM', KEYS[9], game)
    redis.call('ZADD', KEYS[10], 'NX', now, game)
  elseif kind == 'active' then
    local since = tonumber(redis.call('ZSCORE', KEYS[9], game))
    if not since or tonumber(now) - since >= tonumber(ARGV[i + 10]) then  -- else recent enough for retention
      redis.call('ZADD', KEYS[9], now, game)
    end
  end
end
if ARGV[i + 5] ~= '' then  -- repairs a lost index entry: the index may run early, never late
  redis.call('ZADD', KEYS[8], 'LT', ARGV[i + 5], game)
end
local folded = tonumber(ARGV[i + 1])
if ARGV[i + 2] == '1' and folded == current then
  return {outcome, current, 1}  -- its lifecycle is pending at the head: the mark stays, for the sweeper
end
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local head = 0
if #last > 0 then
  head = tonumber(string.sub(last[1][1], 3))
end
if head > current then  -- appended since the fold: the game is handed over again, and stays marked
  redis.call('ZADD', KEYS[3], 'NX', now, game)
  return {outcome, current, 1}
end
memory_only('ZREM', KEYS[3], game)  -- after a restart the mark is back: the game is projected again
return {outcome, current, 2}
