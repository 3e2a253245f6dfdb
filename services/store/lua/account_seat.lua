-- An account is about to take a seat: note when, in the account's own slot, but only if the account
-- still exists (services.store.retention.account_seating).
-- KEYS[1] the account's events stream, KEYS[2] its "last seated" string
-- ARGV[1] now (ms). Replies 1 when noted, 0 when the account is gone (removed by retention).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1])
return 1
