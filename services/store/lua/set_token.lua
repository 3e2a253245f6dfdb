-- Bind a token digest to a role, or revoke it, and announce the change.
-- KEYS[1] the game's tokens hash
-- ARGV[1] the game's live channel ('tokens' is published on it: views cached in API processes for
-- the token are dropped, services.api.view_cache), ARGV[2] the digest, ARGV[3] the role ('' revokes).
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[2])
else
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
end
redis.call('SPUBLISH', ARGV[1], 'tokens')
return 'ok'
