"""Hints at practice tables: what the ``strong`` bot would play from the asking seat's own view.

Where the work is done: in the API request, in a worker thread (``anyio.to_thread``), at most
``HINT_THREADS`` at once per API process, so the event loop keeps serving everyone else while one
hint searches (the ``strong`` level's budget, about 150 ms of CPU). Why not the bot queue: the
player waits for the answer with nothing else to do, a queued job would add a worker hop and a
poll to every hint, and the cost is bounded per seat by the ``hint`` rate limit
(``Settings.hint_rate``) and per process by the thread cap. Asked again before the game moves on,
the first answer is replayed from the stream (the command id ``hint-<version>-<seat>``) and nothing
is computed or recorded again.

Chance: ``hint_rng`` is a ``BotRandom`` keyed from the game's secret master seed (``SecretSeeds.
bot_key``, under a hint label of its own), never a public seed. At a practice table the master seed
is the practice seed, known to whoever created the table, who knows the deal anyway.

The suggestion is recorded as ``hint_given`` (``domain.table.HintGiven``): the seat's legal command
and the reason's glossary key, hidden from every other seat until the game is over.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import weakref
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread

from bots import BotRandom
from bots.levels import advise
from domain.fairness import SecretSeeds
from domain.table import HintGiven
from projections.narration import describe_move
from projections.views import seat_view
from projections.words import DEFAULT_LANGUAGE, has, word
from services.history.folding import Folded
from services.table.commands import CommandOutcome, GameCommands

HINT_LEVEL = "strong"
HINT_THREADS = 2  # hints searched at once per API process; others wait for a thread
HINT_LABEL = b"tablestream-hint"

_threads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)
"""The thread cap of each event loop (an API process has one; tests start several, one after another)."""


def hint_rng(seeds: SecretSeeds, game_id: str, version: int, seat: int) -> BotRandom:
    """The hint's only chance: HMAC-SHA256(bot key of the seat at ``version``, "tablestream-hint"),
    so a hint never repeats the draws the seat's bot would make at the same version."""
    key = hmac.new(seeds.bot_key(game_id, version, seat), HINT_LABEL, hashlib.sha256).digest()
    return BotRandom(key)


def suggestion(
    folded: Folded, seat: int, seeds: SecretSeeds
) -> tuple[Mapping[str, Any], dict[str, Any] | None]:
    """The ``strong`` level's command for ``seat`` from the seat's own view (exactly what
    ``GET /games/{id}/view`` gives it), and its reason (``{"key", "params"}``) or ``None``."""
    view = seat_view(folded.state, folded.version, seat)
    advice = advise(
        folded.state.game, view, HINT_LEVEL, hint_rng(seeds, folded.game_id, folded.version, seat)
    )
    reason = None if advice.reason is None else {"key": advice.reason, "params": dict(advice.params)}
    return advice.command, reason


async def suggest_in_thread(
    folded: Folded, seat: int, seeds: SecretSeeds
) -> tuple[Mapping[str, Any], dict[str, Any] | None]:
    loop = asyncio.get_running_loop()
    limiter = _threads.get(loop)
    if limiter is None:
        limiter = _threads[loop] = anyio.CapacityLimiter(HINT_THREADS)
    return await anyio.to_thread.run_sync(suggestion, folded, seat, seeds, limiter=limiter)


async def give_hint(commands: GameCommands, game_id: str, seat: int) -> CommandOutcome:
    """Ask for ``seat``'s hint and record it (``GameCommands.hint``)."""
    return await commands.hint(game_id, seat, suggest_in_thread)


def reason_text(reason: Mapping[str, Any] | None, lang: str) -> str | None:
    """The reason in ``lang``, or ``None`` when there is none or the glossary lacks its key."""
    if reason is None:
        return None
    key = str(reason.get("key"))
    if not has(lang, key):
        lang = DEFAULT_LANGUAGE
        if not has(lang, key):
            return None
    try:
        return word(lang, key, **dict(reason.get("params") or {}))
    except (KeyError, IndexError, ValueError):
        return None


def answer(outcome: CommandOutcome, seat: int, lang: str) -> dict[str, Any]:
    """The hint as the API answers it: the suggested command, the reason (key, values, sentence)."""
    given = next(event for _, event in outcome.events if isinstance(event, HintGiven) and event.seat == seat)
    reason = given.reason
    shown = None
    if reason is not None:
        shown = {
            "key": reason.get("key"),
            "params": reason.get("params") or {},
            "text": reason_text(reason, lang),
        }
    return {
        "version": outcome.version,
        "command": given.command,
        "command_text": describe_move(outcome.table.rules.name, given.command or {}, lang),
        "reason": shown,
        "receipt": outcome.receipt(),
    }
