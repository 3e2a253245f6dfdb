"""Rematch: after a game, its players agree to play again at a new table.

Each human seat of the finished game answers: accept ("Play again") or decline. The first answer
opens the rematch; one decline ends it with no table ("X declined"); when every human seat has
accepted, exactly one new table is made by the same services as any other (``GameCommands.create``,
``join``, ``fill_with_bots``): the same game and options (``private`` included), the humans seated
in the order they sat (same names, same accounts), a bot in every other seat as the host would
fill it, a new commitment and new seeds (a practice table's rematch is not a practice table: its
seeds are fresh). Each player gets their own new seat token: the accept that makes the table answers
it to its caller, and ``state`` gives each seat's token to that seat's caller only.

The state lives in one Redis hash per finished game (``ts:{<id>}:rematch``, kept an hour after its
last change); every change is one Lua script, so two accepts racing see one of them flip the state
to ``creating`` and only that one makes the table. A maker that died meanwhile (``creating`` for a
minute) is taken over by the next accept.

Seats are given again in order (a join takes the lowest free seat): when the humans sat before the
bots, as a table filled by its host does, every player keeps their seat; a bot that sat between two
humans (a seat a player left during the game is a bot's now) is seated after them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog

from domain.table import MAX_EXPIRE_MINUTES, MAX_TURN_BASED_EXPIRE_MINUTES, Account, TableState
from services.errors import ConflictError, ForbiddenError
from services.store.keys import PREFIX, check_game_id
from services.table.commands import GameCommands

log = structlog.get_logger("tablestream.rematch")

KEEP_SECONDS = 3600
STALE_MS = 60_000
"""A table still being made after this long: its maker died; the next accept makes it."""

SCRIPT = """
local key = KEYS[1]
local action, seat, humans, now, keep = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local stale = tonumber(ARGV[6])
if redis.call('EXISTS', key) == 0 then
  if action ~= 'accept' and action ~= 'decline' then return 'gone' end
  redis.call('HSET', key, 'status', 'pending', 'humans', humans)
end
local status = redis.call('HGET', key, 'status')
local outcome = status
if action == 'accept' then
  if status == 'pending' or status == 'creating' then
    redis.call('HSET', key, 'answer:' .. seat, 'accepted')
  end
  if status == 'pending' then
    outcome = 'create'
    for h in string.gmatch(redis.call('HGET', key, 'humans'), '[^,]+') do
      if redis.call('HGET', key, 'answer:' .. h) ~= 'accepted' then outcome = 'pending' end
    end
  elseif status == 'creating' and now - tonumber(redis.call('HGET', key, 'since')) >= stale then
    outcome = 'create'
  end
  if outcome == 'create' then
    redis.call('HSET', key, 'status', 'creating', 'since', now, 'maker', seat)
  end
elseif action == 'decline' then
  if status == 'pending' then
    redis.call('HSET', key, 'status', 'declined', 'declined_by', seat, 'answer:' .. seat, 'declined')
    outcome = 'declined'
  end
elseif action == 'made' or action == 'failed' then
  if status ~= 'creating' or redis.call('HGET', key, 'maker') ~= seat then return 'lost' end
  if action == 'made' then
    redis.call('HSET', key, 'status', 'made', unpack(ARGV, 7))
  else
    redis.call('HSET', key, 'status', 'pending')
    redis.call('HDEL', key, 'answer:' .. seat, 'maker', 'since')
  end
  outcome = action
end
redis.call('EXPIRE', key, keep)
return outcome
"""


def rematch_key(game_id: str) -> str:
    return f"{PREFIX}:{{{check_game_id(game_id)}}}:rematch"


def human_seats(state: TableState) -> list[int]:
    """The seats a person played to the end: not a bot's from the start, not left during the game
    (a seat a bot took over after timeouts is still its player's)."""
    return [
        p.seat for p in state.seated if state.takeovers.get(p.seat) != "host" and p.seat not in state.left
    ]


@dataclass(frozen=True)
class Answer:
    """A rematch state for one caller, and the new seat's token to hand them (``None``: none)."""

    body: dict[str, Any]
    token: str | None = None
    new_game_id: str | None = None


SeatCheck = Callable[[Account, str], Awaitable[bool]]
"""Whether an account may still take a seat (``services.store.retention.account_seating``) at the
new table (its id: the check notes it in the account's "Your tables", as a join does)."""


class Rematches:
    def __init__(self, redis: Any, commands: GameCommands) -> None:
        """``redis``: the store's asyncio client (``EventStore.redis``; a cluster too: one key per
        script run)."""
        self.redis = redis
        self.commands = commands
        self._script = redis.register_script(SCRIPT)

    async def state(self, game_id: str, seat: int | None) -> Answer:
        """The rematch of ``game_id`` as ``seat``'s player (``None``: anyone else) sees it."""
        folded = await self.commands.load(game_id)
        stored = await self.redis.hgetall(rematch_key(game_id))
        return _answer(game_id, folded.state, {_text(k): _text(v) for k, v in stored.items()}, seat)

    async def accept(self, game_id: str, seat: int, seat_check: SeatCheck) -> Answer:
        """``seat`` wants to play again; the accept that completes the rematch makes the table."""
        state = await self._finished(game_id, seat)
        outcome = await self._run("accept", game_id, seat, state)
        if outcome == "declined":
            raise ConflictError("rematch_declined", "A player declined the rematch: no new table is made.")
        if outcome == "create":
            await self._make(game_id, seat, state, seat_check)
        return await self.state(game_id, seat)

    async def decline(self, game_id: str, seat: int) -> Answer:
        state = await self._finished(game_id, seat)
        outcome = await self._run("decline", game_id, seat, state)
        if outcome in ("creating", "made"):
            raise ConflictError("rematch_made", "Every player accepted: the new table is already made.")
        return await self.state(game_id, seat)

    async def _finished(self, game_id: str, seat: int) -> TableState:
        state = (await self.commands.load(game_id)).state
        if state.status != "finished":
            raise ConflictError("game_not_finished", "A rematch is offered once the game is over.")
        if seat not in human_seats(state):
            raise ForbiddenError("not_a_player", "Only a player who played this game to its end may answer.")
        return state

    async def _run(self, action: str, game_id: str, seat: int, state: TableState, *more: Any) -> str:
        humans = ",".join(str(s) for s in human_seats(state))
        args = [action, str(seat), humans, int(time.time() * 1000), KEEP_SECONDS, STALE_MS, *more]
        return _text(await self._script(keys=[rematch_key(game_id)], args=args))

    async def _make(self, game_id: str, maker: int, state: TableState, seat_check: SeatCheck) -> None:
        """The new table: created, its humans seated in order, its other seats filled with bots."""
        try:
            options: dict[str, Any] = msgspec.to_builtins(state.options)
            if state.timers is not None:
                options |= msgspec.structs.asdict(state.timers)
                # a table recorded before the bound may have waited longer than a new one may
                longest = MAX_TURN_BASED_EXPIRE_MINUTES if options.get("turn_based") else MAX_EXPIRE_MINUTES
                options["expire_minutes"] = min(options["expire_minutes"], longest)
            new_id, _host_token = await self.commands.create(state.game, state.players, options)
            fields: list[str] = ["new_game_id", new_id]
            by_seat = {p.seat: p for p in state.seated}
            for old in human_seats(state):
                player = by_seat[old]
                account = player.account
                if account is not None and not await seat_check(account, new_id):
                    account = None  # removed meanwhile (retention): seated under the name alone
                seat, token = await self.commands.join(new_id, player.name, "", account)
                fields += [f"token:{old}", token, f"seat:{old}", str(seat)]
            if len(human_seats(state)) < state.players:
                await self.commands.fill_with_bots(new_id)
        except BaseException:
            await self._run("failed", game_id, maker, state)
            raise
        await self._run("made", game_id, maker, state, *fields)
        log.info("rematch_made", game_id=game_id, new_game_id=new_id)


def _answer(game_id: str, state: TableState, stored: dict[str, str], seat: int | None) -> Answer:
    humans = set(human_seats(state))
    status = stored.get("status", "open")
    seats = [
        {
            "seat": p.seat,
            "name": p.name,
            "bot": p.seat not in humans,
            "answer": stored.get(f"answer:{p.seat}", "pending") if p.seat in humans else None,
        }
        for p in state.seated
    ]
    declined_by = stored.get("declined_by")
    new_game_id = stored.get("new_game_id")
    body: dict[str, Any] = {
        "game_id": game_id,
        "status": status,
        "finished": state.status == "finished",
        "seats": seats,
        "declined_by": int(declined_by) if declined_by is not None else None,
        "new_game_id": new_game_id,
        "your_seat": None,
    }
    token = None
    if status == "made" and seat is not None and f"token:{seat}" in stored:
        token = stored[f"token:{seat}"]
        body["your_seat"] = int(stored[f"seat:{seat}"])
    return Answer(body, token, new_game_id)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
