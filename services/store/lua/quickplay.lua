-- Quick play's queue (services.store.quickplay): every change of a ticket is one run of this script,
-- so a cancel and a match claiming the same ticket never both happen. Every key carries the hash
-- tag {qp}: one slot. ARGV[1] names the step.
--
-- open:    KEYS ticket, queue, queues set, owner (or the ticket key again: no owner)
--          ARGV id, queue name, arrived ms, then field, value pairs. Replies {'live', id} when the
--          owner holds a live ticket (nothing written), else {'new', id}.
-- claim:   KEYS queue, matches zset, match hash, ticket 1..n
--          ARGV match id, now ms, then match field, value pairs. Replies 1 when every ticket was still
--          queued (all are then 'matched', out of the queue, and the match is pending), else 0 and
--          nothing is written.
-- cancel:  KEYS ticket, queue, owner; ARGV digest. Replies 'cancelled' (ticket, queue entry and owner
--          gone), 'missing' (unknown ticket or another secret), or the state that forbids it.
-- read:    KEYS ticket, queue; ARGV digest, now ms, deliver (1: hand out the seat token once).
--          Replies {} for a missing ticket or another secret, else the ticket's field, value pairs
--          plus 'position' (1-based, while queued) and, once, 'token'.
-- bots:    KEYS ticket; ARGV digest. Agree to bots: replies the state ('' when missing).
-- drop:    KEYS ticket, queue, owner; ARGV arrived-before ms ('' for none), ticket ttl s, mode
--          ('timeout': kept as 'timed_out' for ttl; 'abandon': removed). Only a queued ticket.
-- forget:  KEYS queue, ticket 1..n; ARGV their ids. Takes out of the queue the ids whose ticket
--          expired (no matcher ran for an hour).
-- seated:  KEYS matches zset, match hash, then per ticket: ticket key, owner key
--          ARGV match id, game id, ticket ttl s, then per ticket: seat, token.
-- give_back: KEYS matches zset, match hash, queue, ticket 1..n; ARGV match id. A match whose table
--          was never made: each ticket still 'matched' by it is queued again at its arrival.
local step = ARGV[1]
local KEEP_QUEUED = 3600  -- seconds a queued ticket and its owner's hold live without a matcher

-- a finished or undone match leaves the pending set
local function forget_match(matches, match, id)
  redis.call('DEL', match)
  redis.call('ZREM', matches, id)
  return 1
end

-- an owner key equal to the ticket's own key means: no owner (an anonymous ticket)
local function owned_by(owner, ticket, id)
  return owner ~= ticket and redis.call('GET', owner) == id
end

if step == 'open' then
  local ticket, queue, queues, owner = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  local id, name, arrived = ARGV[2], ARGV[3], ARGV[4]
  if owner ~= ticket then
    local held = redis.call('GET', owner)
    if held then
      local held_key = string.sub(ticket, 1, #ticket - #id) .. held  -- the same prefix, the held id
      local state = redis.call('HGET', held_key, 'state')
      if state == 'queued' or state == 'matched' then
        return {'live', held}
      end
    end
  end
  redis.call('HSET', ticket, unpack(ARGV, 5))
  redis.call('HSET', ticket, 'state', 'queued', 'seen', arrived)
  redis.call('EXPIRE', ticket, KEEP_QUEUED)  -- a safety net: the matcher drops it long before
  redis.call('ZADD', queue, arrived, id)
  redis.call('SADD', queues, name)
  if owner ~= ticket then
    redis.call('SET', owner, id, 'EX', KEEP_QUEUED)
  end
  return {'new', id}
end

if step == 'claim' then
  local queue, matches, match = KEYS[1], KEYS[2], KEYS[3]
  for i = 4, #KEYS do
    if not redis.call('ZSCORE', queue, redis.call('HGET', KEYS[i], 'id') or '') then
      return 0
    end
    if redis.call('HGET', KEYS[i], 'state') ~= 'queued' then
      return 0
    end
  end
  local ids = {}
  for i = 4, #KEYS do
    local id = redis.call('HGET', KEYS[i], 'id')
    ids[#ids + 1] = id
    redis.call('ZREM', queue, id)
    redis.call('HSET', KEYS[i], 'state', 'matched', 'match', ARGV[2])
    redis.call('PERSIST', KEYS[i])  -- kept until its match is finished
  end
  redis.call('HSET', match, 'tickets', table.concat(ids, ','), unpack(ARGV, 4))
  redis.call('ZADD', matches, ARGV[3], ARGV[2])
  return 1
end

if step == 'cancel' then
  local ticket, queue, owner = KEYS[1], KEYS[2], KEYS[3]
  local found = redis.call('HMGET', ticket, 'digest', 'state', 'id')
  if not found[1] or found[1] ~= ARGV[2] then
    return 'missing'
  end
  if found[2] == 'matched' or found[2] == 'seated' then
    return found[2]
  end
  redis.call('ZREM', queue, found[3])
  redis.call('DEL', ticket)
  if owned_by(owner, ticket, found[3]) then
    redis.call('DEL', owner)
  end
  return 'cancelled'
end

if step == 'read' then
  local ticket, queue = KEYS[1], KEYS[2]
  if redis.call('HGET', ticket, 'digest') ~= ARGV[2] then
    return {}
  end
  local state = redis.call('HGET', ticket, 'state')
  if state == 'queued' or state == 'matched' then
    redis.call('HSET', ticket, 'seen', ARGV[3])
  end
  local fields = redis.call('HGETALL', ticket)
  if state == 'queued' then
    local rank = redis.call('ZRANK', queue, redis.call('HGET', ticket, 'id'))
    if rank then
      fields[#fields + 1] = 'position'
      fields[#fields + 1] = tostring(rank + 1)
    end
  end
  if state == 'seated' and ARGV[4] == '1' then
    local token = redis.call('HGET', ticket, 'seat_token')
    if token then
      redis.call('HDEL', ticket, 'seat_token')
      fields[#fields + 1] = 'token'
      fields[#fields + 1] = token
    end
  end
  return fields
end

if step == 'bots' then
  local found = redis.call('HMGET', KEYS[1], 'digest', 'state')
  if not found[1] or found[1] ~= ARGV[2] then
    return ''
  end
  if found[2] == 'queued' then
    redis.call('HSET', KEYS[1], 'bots', '1')
  end
  return found[2]
end

if step == 'forget' then  -- KEYS queue, then ticket keys; ARGV ids: those whose ticket is gone leave the queue
  for i = 2, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 0 then
      redis.call('ZREM', KEYS[1], ARGV[i])
    end
  end
  return 1
end

if step == 'drop' then
  local ticket, queue, owner = KEYS[1], KEYS[2], KEYS[3]
  local found = redis.call('HMGET', ticket, 'state', 'id', 'seen', 'arrived')
  if found[1] ~= 'queued' then
    return 0
  end
  redis.call('ZREM', queue, found[2])
  if owned_by(owner, ticket, found[2]) then
    redis.call('DEL', owner)
  end
  if ARGV[4] == 'abandon' then
    redis.call('DEL', ticket)
  else
    redis.call('HSET', ticket, 'state', 'timed_out')
    redis.call('EXPIRE', ticket, ARGV[3])
  end
  return 1
end

if step == 'seated' then
  local matches, match = KEYS[1], KEYS[2]
  local n = (#KEYS - 2) / 2
  for i = 1, n do
    local ticket, owner = KEYS[2 * i + 1], KEYS[2 * i + 2]
    local id = redis.call('HGET', ticket, 'id')
    if id and redis.call('HGET', ticket, 'state') == 'matched' then
      redis.call('HSET', ticket, 'state', 'seated', 'game_id', ARGV[3], 'seat', ARGV[3 + 2 * i],
        'seat_token', ARGV[4 + 2 * i])
      redis.call('EXPIRE', ticket, ARGV[4])
      if owned_by(owner, ticket, id) then
        redis.call('DEL', owner)
      end
    end
  end
  return forget_match(matches, match, ARGV[2])
end

if step == 'give_back' then
  local matches, match, queue = KEYS[1], KEYS[2], KEYS[3]
  for i = 4, #KEYS do
    local found = redis.call('HMGET', KEYS[i], 'id', 'state', 'match', 'arrived')
    if found[1] and found[2] == 'matched' and found[3] == ARGV[2] then
      redis.call('HSET', KEYS[i], 'state', 'queued')
      redis.call('HDEL', KEYS[i], 'match')
      redis.call('EXPIRE', KEYS[i], KEEP_QUEUED)
      redis.call('ZADD', queue, found[4], found[1])
    end
  end
  return forget_match(matches, match, ARGV[2])
end

return redis.error_reply('unknown quickplay step ' .. tostring(step))
