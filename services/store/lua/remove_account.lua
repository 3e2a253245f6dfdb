-- Remove an idle unverified account's stream (services.store.retention.retire_accounts), in one
-- atomic step of its slot, only if nothing was appended since the sweeper read it.
-- KEYS[1] the account's events stream, KEYS[2] its "last seated" string (account_seat.lua)
-- ARGV[1] the head version the sweeper read (it found no password up to there), ARGV[2] the cutoff
-- (ms): an account seated after it is in use.
-- Replies 1 when removed; else 0 (an append since: a password set, a login, a logout...; or a seat
-- taken, or being taken, since the cutoff).
local head = 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #top > 0 then
  head = tonumber(string.match(top[1][1], '^0%-(%d+)$'))
  if head == nil then
    return redis.error_reply('ts: stream head ' .. top[1][1] .. ' is not a version id')
  end
end
if head == 0 or head ~= tonumber(ARGV[1]) then
  return 0
end
if tonumber(redis.call('GET', KEYS[2]) or '0') > tonumber(ARGV[2]) then
  return 0
end
-- no password at that head (the caller read it); checked again here, in the same step as the delete
local entries = redis.call('XRANGE', KEYS[1], '-', '+')
for _, entry in ipairs(entries) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'd' and string.find(fields[i + 1], '"type":"password_set"', 1, true) then
      return 0
    end
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
