-- Append one command's batch of events to a game's stream, atomically and at most once per seat.
-- KEYS[1] events stream, KEYS[2] legacy commands hash (unscoped ids, read only), KEYS[3] the seats
-- hash of before (not written: a seat's version is a field of KEYS[4] now, read beside the old one),
-- KEYS[4] seat-scoped commands hash (dedup, and the field '<seat>' -> the last version appended by
-- that seat's commands, written with its record in one HSET), KEYS[5] the game's pending-projection
-- flag, KEYS[6] the game's timer hash, KEYS[7] the game's tokens hash, KEYS[8] the game's views hash;
-- and, only when the global indexes live on this server (one Redis, not a cluster:
-- services.store.indexes), KEYS[9] the dirty set, KEYS[10] the hand-over stream, KEYS[11] the timer
-- deadline index
-- ARGV[1] expected head version, ARGV[2] dedup field ('<seat>:<command id>'), ARGV[3] fingerprint,
-- ARGV[4] seat ('' = none), ARGV[5] legacy field to check ('' = none: the caller found that the legacy
-- record of this id belongs to another seat), ARGV[6] the pending flag's time to live (ms),
-- ARGV[7] the game's live channel (a shard channel in its slot): 'appended' is published on it in
-- the same atomic step (views cached in API processes rely on it: services.api.view_cache),
-- ARGV[8] the timer of the new head: '' leaves the timer alone (a table without timers), '-' clears
-- it (when it has a deadline), else its deadline (ms); ARGV[9] now (ms, the dirty mark's score),
-- ARGV[10] the game's id, ARGV[11] the most entries the hand-over stream holds, ARGV[12] a token's digest
-- ('' = none) and ARGV[13] the role it must hold (an identity the caller assumed from memory: a
-- token revoked or rebound since is refused before anything else, reply {'token', role or ''});
-- ARGV[14] n, the timer's field, value pairs that follow (ARGV[15..14+2n]), then data, hash pairs,
-- one per event, for versions expected+1, ...
-- A turn timer keeps the stored deadline when the seats it times now are a strict subset of the
-- stored turn timer's (services.table.lifecycle.plan_timer's rule, applied here to the timer as it is, so
-- that a caller that did not read the timer plans it blind: a fresh deadline).
-- The timer is armed for the last version in the same atomic step (as arm_timer.lua, never going
-- back to a newer one), so it is never behind the head.
-- The pending flag (KEYS[5]) and the hand-over are memory only (replication off: neither goes to the
-- append-only file nor to replicas), so the append's own writes are its only durable ones, one fsync
-- per command: the flag is set when no projection is pending (a projection consumer clears it as it
-- claims the game, begin_projection.lua), and only then is the game handed over. With the index keys
-- the hand-over is part of the same step (operations.publish_appended does it in a second round trip
-- otherwise, handover.lua): the game is marked dirty (durable: after a restart, which loses the flag
-- and the stream, the dirty set says what to project again), added to the hand-over stream (a
-- consumer blocks on it with XREAD, a read; at its bound it takes no more and the sweeper projects
-- the marked game), and its new deadline indexed when earlier than the indexed one (ZADD LT: the
-- index may lag the timer, never lose it; the timer loop moves a due entry on to a later deadline,
-- services.store.indexes.settle_timer, so a turn's later deadline costs no write here).
-- The views (KEYS[8]) are memory only too (project_views.lua); the version their fields hold, 'at',
-- is deleted in the append-only file and on replicas by every append that finds it, and kept in
-- memory: views a snapshot (an AOF rewrite, a replica's sync) caught are not trusted after a restart
-- or a failover once the game moved on (operations.valid_views), while readers here go on using them.
-- Replies {'dup', '<fingerprint> <first> <last>'} | {'legacy', '<fingerprint> <first> <last>'} (an
-- unscoped record written before ids were scoped: the caller checks whose it is) | {'conflict', head}
-- | {'token', role} | {'ok', first, last, poke, handover, armed}: poke is '1' when this append set the
-- pending flag (the game goes to the projection consumers), '0' when one was pending already;
-- handover is '' when the caller hands over (no index keys), else '1' (the script did: nothing left
-- to the caller); armed is the deadline this append armed ('' when it armed none).
-- The timer is one field, 't', of the timer hash: "<version> <deadline> <kind> <seats> <turn_seconds>",
-- '-' for an absent part, trailing ones left out (services.store.timer_record; a hash of those five
-- fields, written before, reads the same and is replaced by the field the first time it is written).
-- No write here rewrites a value unchanged (each would still go to the append-only file): the timer is
-- written only for a newer version, 'NX' and 'LT' leave the indexes alone when they hold the game
-- already; only a retry's record is written again, on purpose (below).
-- Every read and check comes before the first write: Lua has no rollback.
-- include: timer_record
if ARGV[12] ~= '' then
  local role = redis.call('HGET', KEYS[7], ARGV[12])
  if role ~= ARGV[13] then
    return {'token', role or ''}
  end
end
local prior = redis.call('HGET', KEYS[4], ARGV[2])
if prior then
  -- Written again, unchanged: a write of this connection's, so that a WAIT/WAITAOF after this reply
  -- also covers the original record (a retry's receipt waits for the replicas like the first try).
  redis.call('HSET', KEYS[4], ARGV[2], prior)
  return {'dup', prior}
end
if ARGV[5] ~= '' then
  local legacy = redis.call('HGET', KEYS[2], ARGV[5])
  if legacy then
    return {'legacy', legacy}
  end
end
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
local timer_fields = tonumber(ARGV[14])
local base = 14 + 2 * timer_fields
local count = (#ARGV - base) / 2
if count < 1 or count ~= math.floor(count) then
  return redis.error_reply('ts: append needs data, hash pairs')
end
local first = expected + 1
local last = expected + count
local deadline = ARGV[8]
local arm = false
local stored, old_form = nil, false
local planned = {}
for i = 15, base, 2 do
  local field, value = ARGV[i], ARGV[i + 1]
  if not TIMER_PLANNED[field] or value == '-' or string.find(value, ' ', 1, true) then
    return redis.error_reply('ts: timer field ' .. field .. ' = "' .. value .. '" cannot be stored')
  end
  planned[field] = value
end
if deadline ~= '' then
  stored, old_form = read_timer(KEYS[6])
  arm = tonumber(stored.version or '0') < last
  if deadline == '-' then
    arm = arm and stored.deadline ~= nil
  elseif stored.deadline and stored.kind == 'turn' then
    local kind, seats = planned.kind, planned.seats
    if kind == 'turn' and seats then
      local before, n_before = {}, 0
      for seat in string.gmatch(stored.seats or '', '[^,]+') do
        before[seat] = true
        n_before = n_before + 1
      end
      local inside, n_now = true, 0
      for seat in string.gmatch(seats, '[^,]+') do
        n_now = n_now + 1
        if not before[seat] then inside = false end
      end
      if inside and n_now < n_before then
        deadline = stored.deadline
      end
    end
  end
end
for i = 1, count do
  redis.call('XADD', KEYS[1], '0-' .. (expected + i), 'd', ARGV[base - 1 + 2 * i], 'h', ARGV[base + 2 * i])
end
if arm then
  local value = tostring(last)
  if deadline ~= '-' then
    planned.version, planned.deadline = value, deadline
    value = pack_timer(planned)
  end
  if old_form then
    redis.call('DEL', KEYS[6])
  end
  redis.call('HSET', KEYS[6], 't', value)
end
if ARGV[4] ~= '' then  -- the record and the seat's version (read-your-writes) in one write
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[3] .. ' ' .. first .. ' ' .. last, ARGV[4], last)
else
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[3] .. ' ' .. first .. ' ' .. last)
end
local replicated = redis.set_repl ~= nil  -- fakeredis (unit tests) has none, and nothing to replicate
local at = replicated and redis.call('HGET', KEYS[8], 'at')
if at then  -- deleted in the append-only file and on replicas, kept in memory (above)
  redis.call('HDEL', KEYS[8], 'at')
  redis.set_repl(redis.REPL_NONE)
  redis.call('HSET', KEYS[8], 'at', at)
  redis.set_repl(redis.REPL_ALL)
end
local handover = ''
local armed = ''
if arm and deadline ~= '-' then
  armed = deadline
end
if #KEYS >= 11 then
  redis.call('ZADD', KEYS[9], 'NX', ARGV[9], ARGV[10])
  if armed ~= '' then
    redis.call('ZADD', KEYS[11], 'LT', armed, ARGV[10])
  end
  handover = '1'
end
if replicated then redis.set_repl(redis.REPL_NONE) end
local poke = redis.call('SET', KEYS[5], last, 'NX', 'PX', ARGV[6]) and '1' or '0'
if poke == '1' and handover == '1' and redis.call('XLEN', KEYS[10]) < tonumber(ARGV[11]) then
  redis.call('XADD', KEYS[10], '*', 'g', ARGV[10])
end
if replicated then redis.set_repl(redis.REPL_ALL) end
redis.call('SPUBLISH', ARGV[7], 'appended')
return {'ok', tostring(first), tostring(last), poke, handover, armed}
