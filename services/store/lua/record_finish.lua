-- Record one finished game in the players' read models, once per game, in one global order.
-- KEYS[1] sequence counter, KEYS[2] log stream, KEYS[3] finished hash (game -> sequence),
-- KEYS[4] records hash (game -> JSON), KEYS[5] names hash (account -> display name),
-- KEYS[6] the game's ratings hash (account -> JSON), KEYS[7] the game's leaderboard zset,
-- KEYS[8..] each account's history zset (game -> sequence), in the order of the account args.
-- ARGV[1] expected sequence (what the ratings were read at), ARGV[2] game id, ARGV[3] finish time,
-- ARGV[4] the record JSON, ARGV[5..] per account: id, display name, rating JSON ('' = unrated), ordinal
-- ('' = not on the leaderboard: a provisional rating).
-- Replies {'dup', sequence} (already recorded), {'conflict', sequence} (another game was recorded
-- since the ratings were read: read again) or {'ok', sequence}. Checks come before writes.
local done = redis.call('HGET', KEYS[3], ARGV[2])
if done then
  return {'dup', done}
end
local seq = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq ~= tonumber(ARGV[1]) then
  return {'conflict', tostring(seq)}
end
local accounts = (#ARGV - 4) / 4
if accounts ~= math.floor(accounts) or accounts ~= #KEYS - 7 then
  return redis.error_reply('ts: record_finish needs four args and one history key per account')
end
seq = seq + 1
redis.call('SET', KEYS[1], seq)
redis.call('XADD', KEYS[2], '0-' .. seq, 'g', ARGV[2], 't', ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], seq)
redis.call('HSET', KEYS[4], ARGV[2], ARGV[4])
for i = 1, accounts do
  local at = 4 + (i - 1) * 4
  redis.call('HSET', KEYS[5], ARGV[at + 1], ARGV[at + 2])
  redis.call('ZADD', KEYS[7 + i], seq, ARGV[2])
  if ARGV[at + 3] ~= '' then
    redis.call('HSET', KEYS[6], ARGV[at + 1], ARGV[at + 3])
  end
  if ARGV[at + 4] ~= '' then
    redis.call('ZADD', KEYS[7], ARGV[at + 4], ARGV[at + 1])
  end
end
return {'ok', tostring(seq)}
