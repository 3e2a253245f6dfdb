-- Append one command's batch of events to a game's stream, atomically and at most once per seat.
-- KEYS[1] events stream, KEYS[2] legacy commands hash (unscoped ids, read only), KEYS[3] seats hash,
-- KEYS[4] seat-scoped commands hash (dedup), KEYS[5] the game's pending-projection flag,
-- KEYS[6] the game's timer hash; and, only when the global indexes live on this server (one Redis,
-- not a cluster: services.store.indexes), KEYS[7] the dirty set, KEYS[8] the hand-over set,
-- KEYS[9] the "a drain job is queued" flag, KEYS[10] the timer deadline index
-- ARGV[1] expected head version, ARGV[2] dedup field ('<seat>:<command id>'), ARGV[3] fingerprint,
-- ARGV[4] seat ('' = none), ARGV[5] legacy field to check ('' = none: the caller found that the legacy
-- record of this id belongs to another seat), ARGV[6] the pending flag's time to live (ms),
-- ARGV[7] the game's live channel (a shard channel in its slot): 'appended' is published on it in
-- the same atomic step (views cached in API processes rely on it: services.api.view_cache),
-- ARGV[8] the timer of the new head: '' leaves the timer alone (a table without timers), '-' clears
-- it, else its deadline (ms); ARGV[9] now (ms, the dirty mark's score), ARGV[10] the game's id,
-- ARGV[11] the drain flag's time to live (ms); ARGV[12] n, the timer's field, value pairs that
-- follow (ARGV[13..12+2n]), then data, hash pairs, one per event, for versions expected+1, ...
-- The timer is armed for the last version in the same atomic step (as arm_timer.lua, never going
-- back to a newer one), so it is never behind the head.
-- With the index keys the hand-over is part of the same step (operations.publish_appended does it
-- in a second round trip otherwise): the game is marked dirty, handed over when this append set its
-- pending flag, and its new deadline indexed; the reply then says whether this append claimed the
-- queueing of a drain job.
-- Replies {'dup', '<fingerprint> <first> <last>'} | {'legacy', '<fingerprint> <first> <last>'} (an
-- unscoped record written before ids were scoped: the caller checks whose it is) | {'conflict', head}
-- | {'ok', first, last, poke, handover}: poke is '1' when this append set the pending flag (the game
-- had no projection pending: the game goes to the workers), '0' when one was pending already;
-- handover is '' when the caller hands over (no index keys), else '1' when this append claimed the
-- queueing of a drain job (the caller queues it), '0' when it did not.
-- Every read and check comes before the first write: Lua has no rollback.
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
local timer_fields = tonumber(ARGV[12])
local base = 12 + 2 * timer_fields
local count = (#ARGV - base) / 2
if count < 1 or count ~= math.floor(count) then
  return redis.error_reply('ts: append needs data, hash pairs')
end
local first = expected + 1
local last = expected + count
local arm = ARGV[8] ~= '' and tonumber(redis.call('HGET', KEYS[6], 'version') or '0') < last
for i = 1, count do
  redis.call('XADD', KEYS[1], '0-' .. (expected + i), 'd', ARGV[base - 1 + 2 * i], 'h', ARGV[base + 2 * i])
end
if arm then
  redis.call('DEL', KEYS[6])
  if ARGV[8] == '-' then
    redis.call('HSET', KEYS[6], 'version', last)
  else
    redis.call('HSET', KEYS[6], 'version', last, 'deadline', ARGV[8], unpack(ARGV, 13, base))
  end
end
redis.call('HSET', KEYS[4], ARGV[2], ARGV[3] .. ' ' .. first .. ' ' .. last)
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[4], last)
end
local poke = redis.call('SET', KEYS[5], last, 'NX', 'PX', ARGV[6]) and '1' or '0'
local handover = ''
if #KEYS >= 10 then
  -- the game first, then the flag: a drain job that cleared the flag sees the game
  redis.call('ZADD', KEYS[7], 'NX', ARGV[9], ARGV[10])
  handover = '0'
  if poke == '1' then
    redis.call('SADD', KEYS[8], ARGV[10])
    handover = redis.call('SET', KEYS[9], 1, 'NX', 'PX', ARGV[11]) and '1' or '0'
  end
  if ARGV[8] ~= '' and ARGV[8] ~= '-' then
    redis.call('ZADD', KEYS[10], ARGV[8], ARGV[10])
  end
end
redis.call('SPUBLISH', ARGV[7], 'appended')
return {'ok', tostring(first), tostring(last), poke, handover}
