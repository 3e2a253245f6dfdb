"""The audit of a game for one viewer (docs/fairness.md "Audit"), running or finished.

Per round whose seed is revealed: the seed, its check against the chain's commitment, every chance
outcome re-derived from it and compared with the recorded one (``services.history.replay``), whether the
round's events are what the rules produce, and the round's events. Those events are shown in full
once the game is over, or to the operator (the auditor role) while it runs; to a player or a
spectator while it runs, exactly as ``table.redact(event, seat, finished=False)`` shows them.

A round not finished yet shows only public information: its events as a spectator sees them
(even for the operator and for the seat whose hand it is, so the audit can never become a way to
peek at a running round), no seed, no chance check. Only seeds the stream has revealed can appear:
the audit reads the stored stream alone and never holds a server secret.

Round buckets are those of ``services.history.replay``: 0 is "setup" (create and joins) and counts as
finished with round 1; a chance outcome sits in the round whose seed drew it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from domain.fairness import chain_position, verify_reveal
from domain.kernel import Event
from domain.table import Table
from services.history.records import GENESIS_HASH, Entry, chain_hash, encode_event
from services.history.replay import SETUP, Batch, CorruptStream, Replay, replay, round_label

Viewer = Literal["operator", "player", "spectator"]
VIEWERS: tuple[Viewer, ...] = ("operator", "player", "spectator")


def build_audit(entries: Sequence[Entry], viewer: Viewer, seat: int | None) -> dict[str, Any]:
    """The audit document of a stream (versions 1..head, in order) as ``viewer`` may see it now.

    ``seat`` is the player's seat; it is ignored for the operator and spectators. Raises
    ``ValueError`` for an unknown viewer or a player without a seat, ``CorruptStream`` when the
    stream has no readable ``table_created``.
    """
    if viewer not in VIEWERS:
        raise ValueError(f"unknown viewer {viewer!r}; one of {', '.join(VIEWERS)}")
    if viewer == "player" and (not isinstance(seat, int) or isinstance(seat, bool)):
        raise ValueError("a player's audit needs the player's seat")
    rp = replay(entries)
    if rp.table is None or rp.created is None:
        raise CorruptStream(rp.problem or "the stream has no table_created")
    lens = _Lens(rp, viewer, seat if viewer == "player" else None)
    rounds: dict[int, dict[str, Any]] = {}
    for item, batch, index in rp.events():
        number = batch.event_round(index)
        bucket = rounds.setdefault(number, lens.round_header(number))
        shown = lens.show(item.event, number) if item.event is not None else None
        bucket["events"].append({"version": item.version, "event": shown})
        if lens.finished(number):
            _compare(bucket, batch, index, item.version)
    for number in rp.revealed:
        rounds.setdefault(number, lens.round_header(number))
    return {
        "game_id": rp.created.game_id,
        "game": rp.created.game,
        "practice": rp.created.practice,
        "status": rp.final.status if rp.final is not None else "unknown",
        "viewer": viewer,
        "seat": lens.seat,
        "commitments": [rp.commitments[c] for c in sorted(rp.commitments)],
        "head": {"version": entries[-1].version, "hash": entries[-1].hash},
        "hash_chain": _hash_chain(entries),
        "rounds": [rounds[n] for n in sorted(rounds)],
    }


class _Lens:
    """What this viewer may see of each round, right now."""

    def __init__(self, rp: Replay, viewer: Viewer, seat: int | None) -> None:
        assert rp.table is not None
        self.rp = rp
        self.table: Table = rp.table
        self.viewer = viewer
        self.seat = seat
        self.over = rp.finished

    def finished(self, number: int) -> bool:
        """A round is finished once its seed is revealed; setup together with round 1."""
        return self.over or max(number, 1) in self.rp.revealed

    def show(self, event: Event, number: int) -> Any:
        if self.over or (self.viewer == "operator" and self.finished(number)):
            return _json(event)
        seat = self.seat if self.finished(number) else None
        return _json(self.table.redact(event, seat, finished=False))

    def round_header(self, number: int) -> dict[str, Any]:
        bucket: dict[str, Any] = {
            "round": number,
            "label": round_label(number),
            "finished": self.finished(number),
            "seed": None,
            "seed_check": None,
            "chance_outcomes": [],
            "rules_match": None,
            "events": [],
        }
        seed = self.rp.revealed.get(number) if number != SETUP else None
        if seed is not None:
            chain, index = chain_position(number)
            commitment = self.rp.commitments.get(chain)
            bucket["seed"] = seed.hex()
            bucket["seed_check"] = {
                "chain": chain,
                "index": index,
                "commitment": commitment,
                "ok": commitment is not None and verify_reveal(seed, index, commitment),
            }
        return bucket


def _json(event: Event) -> Any:
    """The event as JSON values (lists, not tuples), exactly as its stored bytes read back."""
    return msgspec.json.decode(encode_event(event))


def _compare(bucket: dict[str, Any], batch: Batch, index: int, version: int) -> None:
    """Record, in a finished round, whether the stored event is what the rules and seed produce."""
    matched = batch.matches(index)
    bucket["rules_match"] = matched if bucket["rules_match"] is None else bucket["rules_match"] and matched
    if index in batch.chance and batch.rerun is not None:
        kind = type(batch.rerun[index]).__struct_config__.tag
        bucket["chance_outcomes"].append({"version": version, "type": kind, "matched": matched})


def _hash_chain(entries: Sequence[Entry]) -> dict[str, Any]:
    """Each link of the stored chain, so a viewer can see the history it is reading is intact."""
    broken = []
    prev, expected_version = GENESIS_HASH, 1
    for entry in entries:
        try:
            link_ok = chain_hash(prev, entry.data) == entry.hash
        except ValueError:
            link_ok = False
        if not link_ok or entry.version != expected_version:
            broken.append(entry.version)
        prev, expected_version = entry.hash, entry.version + 1
    return {"ok": not broken, "broken_at": broken}
