"""The online lifecycle around the write side: after each accepted batch, arm the game's timer and
queue the moves of the bots it leaves to act.

The timer (one per game, ``services.store`` keeps it in the game's hash tag plus a global deadline
index) always belongs to the version just appended:

- a waiting table of the online lifecycle expires ``expire_minutes`` after its last batch (each
  join or leave re-arms it);
- while playing with ``turn_seconds`` > 0, the seats then awaited get ``turn_seconds`` from the
  batch that made them awaited. The clock restarts whenever the awaited seats are not a strict
  subset of those the previous timer waited for (a new turn, or the same seat awaited again, such
  as a challenger flipping disc after disc); when a batch only removes seats (others of a
  simultaneous selection, or a timeout of one of them), the rest keep their deadline;
- otherwise (finished, expired, no turn timer) the timer is cleared.

The write side plans the timer before it appends (from the timer read with the state it decided on)
and the append script arms it in the same atomic step as the events (``TimerPlan``), so a timer is
never behind a batch appended with one; the deadline index follows in the same step on one server,
else in the announcement's round trip (``publish_appended``), and a projection puts it there again
if that was lost
(``after_projection``). A timer behind its head (a batch appended without a lifecycle, or by a
process before this scheme) makes the projector leave the game in the dirty set, and the sweeper
runs ``after_append`` again (``timer_behind``, ``workers.sweeper``).

Bots' moves are queued as jobs at once, one bot per batch (``bot_to_move``), except at a table
where a person sits and whose ``bot_pace_ms`` is not 0 (``bot_delay_ms``): there a move goes into
the paced index with its due time (``indexes.pace_bots``), which the worker's pacing loop turns into
a job once due (``workers.lifecycle.PaceLoop``). Pacing touches no timer: the timer is armed with
the batch as ever.

Clocks are injected (``Clock``, milliseconds) so that tests drive time; the domain stays clock-free.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from domain.table import TableState
from services.history.folding import Folded
from services.store import indexes
from services.store.event_store import EventStore
from services.store.operations import TimerPlan

Clock = Callable[[], int]
"""Milliseconds since the epoch."""

BotMoves = Callable[[str, int, list[int]], Awaitable[None]]
"""Queue the moves of ``seats``' bots on a game at a version (``services.store.queue.BotJobs``)."""

log = structlog.get_logger("tablestream.lifecycle")


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def plan_timer(
    previous: dict[str, str], folded: Folded, now_ms: int, keep_deadline: bool = False
) -> tuple[int | None, dict[str, Any]]:
    """The deadline (``None``: no timer) and the fields of the timer for ``folded``'s version.
    ``keep_deadline``: the batch changed no turn (a hint), so the same seats keep their deadline."""
    state = folded.state
    timers = state.timers
    if timers is None:
        return None, {}
    if state.status == "waiting":
        return now_ms + timers.expire_minutes * 60_000, {"kind": "expire"}
    seats = sorted(folded.table.to_act(state))
    if state.status != "playing" or timers.turn_seconds == 0 or not seats:
        return None, {}
    fields: dict[str, Any] = {
        "kind": "turn",
        "seats": ",".join(map(str, seats)),
        "turn_seconds": timers.turn_seconds,
    }
    before = timer_seats(previous) if previous.get("kind") == "turn" else set()
    if "deadline" in previous and (set(seats) < before or (keep_deadline and set(seats) == before)):
        return int(previous["deadline"]), fields
    return now_ms + timers.turn_seconds * 1000, fields


def timer_behind(timer: dict[str, str], folded: Folded) -> bool:
    """Whether ``Lifecycle.after_append`` still has to run for ``folded``'s version: the timer holds
    an older version and this one arms it (or clears a deadline left from before). It stays behind
    when the process that appended died (or lost Redis) before arming; the sweeper repairs it."""
    if int(timer.get("version", 0)) >= folded.version:
        return False
    deadline, _ = plan_timer(timer, folded, 0)
    return deadline is not None or "deadline" in timer


def bots_awaited(folded: Folded) -> list[int]:
    """The seats played by bots that the game at ``folded``'s version waits for."""
    state = folded.state
    return sorted(set(folded.table.to_act(state)) & state.bots)


def bot_to_move(folded: Folded) -> list[int]:
    """The one bot whose move the game at ``folded``'s version queues (or paces): the lowest of
    ``bots_awaited``, or none. A bot's command carries the version it was chosen at (its expected
    version), so of several bots queued at one version (a simultaneous selection) only the first to
    append moves and the others' jobs find the game moved on; each move's batch queues the next bot
    instead, one job per move (every bot queued at every version cost 2.3 jobs per move at a table of
    four 6 nimmt! bots, 4.8 with strong bots beside other workers in the operator's drill)."""
    return bots_awaited(folded)[:1]


def bot_delay_ms(state: TableState) -> int:
    """How long a bot waits before it acts on ``state``: the table's ``bot_pace_ms`` while a person
    holds a seat (seated and not left: playing it, or away while a bot plays it after timeouts, free
    to take it back), so that people can follow the bots' moves and someone away for a minute does
    not come back to a game the bots raced to its end; 0 at a table of bots only (seats a bot was
    given, or that were left), or one without pacing. Never more than half the turn time: a bot's own
    turn timer must not run out because it was told to wait."""
    timers = state.timers
    if timers is None or timers.bot_pace_ms == 0:
        return 0
    if not any(
        player.seat not in state.bots or state.takeovers.get(player.seat) == "timeouts"
        for player in state.seated
    ):
        return 0
    if timers.turn_seconds:
        return min(timers.bot_pace_ms, timers.turn_seconds * 500)
    return timers.bot_pace_ms


def lifecycle_behind(timer: dict[str, str], folded: Folded) -> bool:
    """Whether the game at ``folded``'s version still needs its lifecycle: its timer is behind
    (``timer_behind``) or a bot is to act. A bot's move is a job; one that is lost (its process
    died, its Redis restarted) or failed would leave a table without a turn timer waiting forever,
    so the projector keeps such a game marked and the sweeper has its bots queued again."""
    return timer_behind(timer, folded) or bool(bots_awaited(folded))


def timer_seats(timer: dict[str, str]) -> set[int]:
    return {int(seat) for seat in timer.get("seats", "").split(",") if seat}


def clock_of(folded: Folded, timer: dict[str, str], now_ms: int) -> dict[str, Any] | None:
    """The ``clock`` of a view: the turn timer's length, its deadline (``None`` when no seat is being
    timed) and the server's time; ``None`` for a table without a turn timer."""
    timers = folded.state.timers
    if timers is None or timers.turn_seconds == 0:
        return None
    deadline = timer.get("deadline") if timer.get("kind") == "turn" else None
    if folded.state.status != "playing":
        deadline = None
    return {
        "turn_seconds": timers.turn_seconds,
        "deadline_ms": int(deadline) if deadline is not None else None,
        "now_ms": now_ms,
    }


class Lifecycle:
    """What the write side does after each accepted batch (see the module docstring)."""

    def __init__(self, store: EventStore, bot_moves: BotMoves, clock: Clock = wall_clock_ms) -> None:
        self.store = store
        self.bot_moves = bot_moves
        self.clock = clock

    def timer_plan(
        self, previous: dict[str, str], folded: Folded, keep_deadline: bool = False
    ) -> TimerPlan | None:
        """The timer for ``folded``'s version, planned from the game's ``previous`` timer; ``None``
        when there is nothing to write (no deadline now, none before)."""
        deadline, fields = plan_timer(previous, folded, self.clock(), keep_deadline)
        if deadline is None and "deadline" not in previous:
            return None
        return TimerPlan(deadline, fields)

    def blind_timer_plan(self, folded: Folded) -> TimerPlan | None:
        """The timer for ``folded``'s version planned without reading the stored one (``None``: a
        table without timers): a fresh deadline, or none (clear a stored one). The append script
        keeps the stored turn deadline where ``plan_timer`` would (the seats it times shrink), and
        clears nothing when no deadline is stored, so the armed timer equals ``timer_plan``'s."""
        if folded.state.timers is None:
            return None
        deadline, fields = plan_timer({}, folded, self.clock())
        return TimerPlan(deadline, fields)

    async def after_append(self, folded: Folded, armed: bool = False) -> None:
        """After an accepted batch: arm its timer, unless its append did (``armed``: the write side
        arms it in the append itself; the sweeper's repair does not), and queue its next bot
        (``bot_to_move``): at once,
        or, at a table with a person, paced (put in the paced index, due ``bot_delay_ms`` from now,
        for the worker's pacing loop to queue; a move already waiting there keeps its due time)."""
        if not armed and folded.state.timers is not None:  # a table without timers: no round trip
            plan = self.timer_plan(await self.store.read_timer(folded.game_id), folded)
            if plan is not None:
                await self.store.arm_timer(folded.game_id, folded.version, plan.deadline, plan.fields)
        bots = bot_to_move(folded)
        if not bots:
            return
        delay = bot_delay_ms(folded.state)
        if delay:
            due = self.clock() + delay
            await self.store.run(indexes.pace_bots(folded.game_id, folded.version, bots, due))
        else:
            await self.bot_moves(folded.game_id, folded.version, bots)
