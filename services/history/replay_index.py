"""Where a recorded game's rounds, tricks, turns and phases begin, and which versions are whose moves:
the table of contents the replay viewer navigates by.

A stream is cut where people cut a game when they tell it: a new round begins with the event that
deals it (Skull: ``round_started``), and a round is cut into *steps*: Skull King's bidding and each
trick, 6 nimmt!'s draft and each turn (from its first selection to the next one after the reveal),
Skull's placing of discs, its auction and its challenge. The cut is made on event tags alone, read
without decoding the events (``type`` and ``round``), so it costs one pass over the stored bytes and
never depends on a re-run; what an event reveals is not looked at.

Each game's cut is data its spec declares (``GameSpec.replay_cut``): the events that open a round,
the events that open a step of a kind, and the events that *close* the step in progress, after which
the next opening event starts a new step even of the same kind (the next trick after ``trick_won``).
An event that opens the kind of step already in progress, not closed, continues it (the second
seat's ``card_selected`` of a turn).
Every version belongs to exactly one step: the events before the first round are the ``setup``.

A *move* is the first version of a batch that a seat's command produced: its own (``by`` ``player``),
its bot's, or the default played when its time ran out; the viewer's "my moves" steps through these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from domain.games import spec
from services.history.records import Entry, decode_stored

SETUP_KIND = "setup"
MOVE_KINDS: Mapping[str, str] = {"command": "player", "bot": "bot", "timeout": "timeout"}
"""The record kinds that are a seat's move, and how the events API says who made it (``by``)."""


class _Tag(msgspec.Struct):
    """The two fields of an event the cut reads; the rest of the event is skipped, not decoded."""

    type: str
    round: int | None = None


_tag_decoder = msgspec.json.Decoder(_Tag)


@dataclass
class _Step:
    round: int
    kind: str
    n: int
    start: int
    end: int
    closed: bool = False

    def shown(self) -> dict[str, Any]:
        return {"round": self.round, "kind": self.kind, "n": self.n, "start": self.start, "end": self.end}


def _round_number(tag: _Tag, current: int) -> int:
    """The round an opening event begins: its own ``round`` field, else the next one."""
    return tag.round if tag.round is not None else current + 1


def build_index(game: str, entries: Sequence[Entry]) -> dict[str, Any]:
    """``rounds`` (round, start, end), ``steps`` (round, kind, n, start, end) and ``moves`` (version,
    seat, by) of a stored stream, in stream order; pure, one pass, with the cut the game's spec
    declares (``tests/services/history/test_replay_index.py`` checks every registered game's)."""
    cut = spec(game).replay_cut
    steps: list[_Step] = []
    counts: Counter[tuple[int, str]] = Counter()  # steps so far per (round, kind)
    rounds: list[dict[str, int]] = []
    moves: list[dict[str, Any]] = []
    current_round = 0
    for entry in entries:
        stored = decode_stored(entry.data)
        record = stored.command
        if record is not None and record.kind in MOVE_KINDS and record.seat is not None:
            moves.append({"version": entry.version, "seat": record.seat, "by": MOVE_KINDS[record.kind]})
        tag = _tag_decoder.decode(stored.event)
        step = steps[-1] if steps else None
        opens = cut.step_opens.get(tag.type)
        if tag.type in cut.round_opens and _round_number(tag, current_round) != current_round:
            current_round = _round_number(tag, current_round)
            rounds.append({"round": current_round, "start": entry.version, "end": entry.version})
            step = None  # a new round always starts a new step
        if step is None or (opens is not None and (opens != step.kind or step.closed)):
            kind = opens or (step.kind if step is not None else SETUP_KIND)
            counts[(current_round, kind)] += 1
            step = _Step(current_round, kind, counts[(current_round, kind)], entry.version, entry.version)
            steps.append(step)
        step.end = entry.version
        if tag.type in cut.step_closes:
            step.closed = True
        if rounds:
            rounds[-1]["end"] = entry.version
    setup_end = rounds[0]["start"] - 1 if rounds else (entries[-1].version if entries else 0)
    if setup_end >= 1:
        rounds.insert(0, {"round": 0, "start": 1, "end": setup_end})
    return {"rounds": rounds, "steps": [step.shown() for step in steps], "moves": moves}
