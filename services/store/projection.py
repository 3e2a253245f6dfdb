"""A projection's write, in one round trip: the views compare-and-set on their checkpoint and, when
the global indexes live on the store's one server, everything that follows it there (the public
log's note, the lobby, waiting tables, the timer index, the retention indexes and the dirty mark),
in one script (``project_views.lua``). On a cluster the script writes the game's views only, and the
indexes follow in round trips of their own (``indexes.after_projection``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from services.store.keys import (
    ACTIVITY,
    AT_FIELD,
    CHECKPOINT_FIELD,
    DIRTY,
    EXPIRED,
    LOBBY,
    LOBBY_CHANNEL,
    LOBBY_FIRST,
    LOBBY_ORDER,
    LOBBY_SEQ,
    TIMERS,
    TLOG,
    WAITING,
    check_game_id,
    game_keys,
)
from services.store.requests import Operation, ScriptCall, clock_ms, text
from services.store.retention import activity_kind

PROJECTION_INDEX_KEYS = (
    DIRTY,
    LOBBY,
    LOBBY_ORDER,
    LOBBY_SEQ,
    WAITING,
    TIMERS,
    ACTIVITY,
    EXPIRED,
    TLOG.pending,
    LOBBY_FIRST,
)
"""The keys ``project_views.lua`` writes besides the game's when the indexes live on its server (the
public log's pending games are in the store: on one server with the indexes)."""

ACTIVITY_REFRESH_MS = 60_000
"""A playing game's activity time (``ACTIVITY``, for retention) is written again by a projection only
once it is this old: a move costs the script no durable write (``project_views.lua``)."""

Outcome = Literal["written", "current", "stale", "mismatch"]


@dataclass(frozen=True, slots=True)
class ProjectionWrite:
    """What a projection of a game writes. ``new``: the checkpoint of ``fields`` (``None``: nothing
    to write, the views are at the fold or past it; no fields: the views are dropped and the
    checkpoint moves on); ``folded``: the version the projector folded to (0: no such game) and
    ``behind``, its lifecycle is pending there (the game's dirty mark then stays while the views are
    at it). Written only with the views (by this write): the lobby ``summary``, ``started`` (the table
    no longer counts as waiting), ``status`` (the retention indexes). Always: the armed timer's
    ``deadline`` (put in the timer index if an entry as early is not there), and ``logged``, a head
    to note for the public log, before the views are written (``services.fairness.transparency.log``)."""

    expected: int
    new: int | None
    fields: Mapping[str, bytes]
    folded: int
    behind: bool = False
    summary: bytes | None = None
    started: bool = False
    status: str | None = None
    deadline: int | None = None
    logged: int | None = None


@dataclass(frozen=True, slots=True)
class Projected:
    """What the write did: ``outcome`` (``written``; ``current``, nothing was asked; ``stale``, the
    views were at or past the new checkpoint; ``mismatch``, behind it but not where expected: nothing
    else was done), the views' ``checkpoint`` after it, and ``indexed``: the indexes were brought up
    to date in the same call (the indexes live on the store's one server), ``clean`` whether the
    game's dirty mark was cleared (its views at the head and nothing pending)."""

    outcome: Outcome
    checkpoint: int
    indexed: bool
    clean: bool


def project_views(game_id: str, write: ProjectionWrite) -> Operation[Projected]:
    """``write`` in one call of ``project_views.lua``: compare-and-set of the views on their
    checkpoint (on success ``new`` published on the game's live channel), then, with the indexes on
    the store's server, their updates (as ``indexes.after_projection``, atomically: the dirty mark is
    cleared only while the stream's head is the views' checkpoint, so an append after the fold keeps
    it marked)."""
    check_game_id(game_id)
    if write.new is not None and write.new <= write.expected:
        raise ValueError(f"new checkpoint {write.new} must be past the expected {write.expected}")
    for own in (CHECKPOINT_FIELD, AT_FIELD):
        if own in write.fields:
            raise ValueError(f"{own!r} is set by the store, not a view field")
    k = game_keys(game_id)
    args: list[Any] = [write.expected, "" if write.new is None else write.new, k.live, len(write.fields)]
    for field, value in write.fields.items():
        args += [field, value]
    args += [
        game_id,
        write.folded,
        "1" if write.behind else "0",
        write.summary if write.summary is not None else "",
        "1" if write.started else "0",
        "" if write.deadline is None else write.deadline,
        "" if write.status is None else activity_kind(write.status),
        clock_ms(),
        LOBBY_CHANNEL,
        "" if write.logged is None else write.logged,
        ACTIVITY_REFRESH_MS,
    ]
    outcome, checkpoint, indexed = yield ScriptCall(
        "project_views", [k.views, k.events], args, index_keys=PROJECTION_INDEX_KEYS
    )
    return Projected(_outcome(outcome), int(checkpoint), int(indexed) > 0, int(indexed) == 2)


def _outcome(reply: bytes | str) -> Outcome:
    outcome = text(reply)
    if outcome in ("written", "current", "stale", "mismatch"):
        return outcome  # type: ignore[return-value]
    raise RuntimeError(f"unexpected project_views reply {reply!r}")
