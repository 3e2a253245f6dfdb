-- Remove a finished game's keys once its archive file is written (services.store.archive), in one
-- atomic step of its slot, only if nothing moved since the archiver read what it wrote.
-- KEYS[1] events stream, KEYS[2] views hash, KEYS[3] pending-projection flag, KEYS[4] the game's
-- disputes index (services.store.disputes), KEYS[5..4+ARGV[2]] the streams of the disputes the
-- archiver read in that index, KEYS[5+ARGV[2]..] the game's other keys moved to the archive.
-- ARGV[1] the head version the archive file holds, ARGV[2] how many disputes the archiver read.
-- Replies 1 when removed; else 0: the head moved, the views are not at that head, a projection is
-- pending, the game is not finished, a dispute was opened since the index was read, or a dispute
-- is still open. The disputes (index and streams), the tokens and the chat stay in Redis: they are
-- small, and their own code reads and writes them there.
-- Every read and check comes before the first write.
-- include: game_checks
local expected = tonumber(ARGV[1])
local disputes = tonumber(ARGV[2])
-- only a finished game is archived
if expected == 0 or not unmoved(expected) or not finished() or not disputes_resolved(disputes) then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
for i = 5 + disputes, #KEYS do
  redis.call('DEL', KEYS[i])
end
return 1
