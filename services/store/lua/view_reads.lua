-- What a view read needs, in one call (services.store.operations.view_reads).
-- KEYS[1] views hash, KEYS[2] timer hash, KEYS[3] seats hash (written before), KEYS[4] tokens hash,
-- KEYS[5] events, KEYS[6] seat-scoped commands hash (a seat's version is its field '<seat>')
-- ARGV[1] the checkpoint's field, ARGV[2] the view's own part's field (with the version the fields
-- hold, 'at', and the public part: services.store.operations.view_reads composes them), ARGV[3] seat ('' = a spectator: no seat
-- version), ARGV[4] token digest ('' = none to verify), ARGV[5] '1' to read the timer, ARGV[6] the
-- stream's tail start (an exclusive XRANGE start, '(0-<version>'), ARGV[7] the most entries to read.
-- Replies {{checkpoint, at, public part, own part}, timer (field, value, ...), seat version, token role, tail entries};
-- an absent value is a nil. Reads only.
local views = redis.call('HMGET', KEYS[1], ARGV[1], 'at', 'public', ARGV[2])
local timer = {}
if ARGV[5] == '1' then
  timer = redis.call('HGETALL', KEYS[2])
end
local seat_version = false
if ARGV[3] ~= '' then
  -- the newer of the seats hash written before and the field append.lua writes with each record now
  local before = redis.call('HGET', KEYS[3], ARGV[3])
  local now = redis.call('HGET', KEYS[6], ARGV[3])
  if before and now then
    seat_version = tonumber(before) > tonumber(now) and before or now
  else
    seat_version = now or before
  end
end
local role = false
if ARGV[4] ~= '' then
  role = redis.call('HGET', KEYS[4], ARGV[4])
end
local tail = redis.call('XRANGE', KEYS[5], ARGV[6], '+', 'COUNT', ARGV[7])
return {views, timer, seat_version, role, tail}
