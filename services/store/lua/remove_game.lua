-- Remove an abandoned or expired game (services.store.retention.remove_game), in one atomic step of
-- its slot, only if nothing moved since the sweeper picked it.
-- KEYS[1] events stream, KEYS[2] views hash, KEYS[3] pending-projection flag, KEYS[4] the game's
-- disputes index (services.store.disputes), KEYS[5..4+ARGV[2]] the streams of the disputes the
-- sweeper read in that index, KEYS[5+ARGV[2]..] the game's other keys (all deleted together).
-- ARGV[1] the head version the sweeper saw when it picked the game (its views were at that head),
-- ARGV[2] how many disputes it read in the index.
-- Replies 1 when removed; else 0: the head moved (an append, acknowledged or not yet projected), the
-- views are not at that head, a projection is pending, the game is finished, a dispute was opened
-- since the index was read, or a dispute is still open (its last event is not its resolution: an
-- open dispute's evidence, the game's stream, stays).
-- Every read and check comes before the first write.
-- include: game_checks
local expected = tonumber(ARGV[1])
-- a finished game is history, kept for ever
if not unmoved(expected) or finished() or not disputes_resolved(tonumber(ARGV[2])) then
  return 0
end
redis.call('DEL', unpack(KEYS))
return 1
