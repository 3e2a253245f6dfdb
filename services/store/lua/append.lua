-- Append one command's batch of events to a game's stream, atomically and at most once per seat.
-- KEYS[1] events stream, KEYS[2] legacy commands hash (unscoped ids, read only), KEYS[3] seats hash,
-- KEYS[4] seat-scoped commands hash (dedup), KEYS[5] the game's pending-projection flag,
-- KEYS[6] the game's timer hash
-- ARGV[1] expected head version, ARGV[2] dedup field ('<seat>:<command id>'), ARGV[3] fingerprint,
-- ARGV[4] seat ('' = none), ARGV[5] legacy field to check ('' = none: the caller found that the legacy
-- record of this id belongs to another seat), ARGV[6] the pending flag's time to live (ms),
-- ARGV[7] the game's live channel (a shard channel in its slot): 'appended' is published on it in
-- the same atomic step (views cached in API processes rely on it: services.api.view_cache),
-- ARGV[8] the timer of the new head: '' leaves the timer alone (a table without timers), '-' clears
-- it, else its deadline (ms); ARGV[9] n, the timer's field, value pairs that follow (ARGV[10..9+2n]),
-- then data, hash pairs, one per event, for versions expected+1, expected+2, ...
-- The timer is armed for the last version in the same atomic step (as arm_timer.lua, never going
-- back to a newer one), so it is never behind the head.
-- Replies {'dup', '<fingerprint> <first> <last>'} | {'legacy', '<fingerprint> <first> <last>'} (an
-- unscoped record written before ids were scoped: the caller checks whose it is) | {'conflict', head}
-- | {'ok', first, last, poke}: poke is '1' when this append set the pending flag (the game had no
-- projection pending: the caller hands it to the workers), '0' when one was pending already.
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
local timer_fields = tonumber(ARGV[9])
local base = 9 + 2 * timer_fields
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
    redis.call('HSET', KEYS[6], 'version', last, 'deadline', ARGV[8], unpack(ARGV, 10, base))
  end
end
redis.call('HSET', KEYS[4], ARGV[2], ARGV[3] .. ' ' .. first .. ' ' .. last)
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[4], last)
end
local poke = redis.call('SET', KEYS[5], last, 'NX', 'PX', ARGV[6]) and '1' or '0'
redis.call('SPUBLISH', ARGV[7], 'appended')
return {'ok', tostring(first), tostring(last), poke}
