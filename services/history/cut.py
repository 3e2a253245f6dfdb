"""An export cut at the end of one round's reveal: the history a dispute on that round settles on.

A round ends, and its seed is revealed, in the batch of the command that ended it; the cut is the
last entry of that batch, so every batch in the cut is whole and re-runs as stored. That batch
also deals the next round from the next round's seed, which the stream reveals only later: the
cut export carries such seeds in ``later_seeds`` (each checked by the verifier against its
chain's commitment), so the deal is re-derived like any other draw. ``cut`` states the round, the
version and the scores at the cut (recomputed by the verifier from the rules).

Only a game that is over is cut: before the end, the next round's deal in the cut's last batch is
hidden (``DisputeSealed``), and a round sealed until the end (docs/fairness.md "Seeds") is
revealed only by the ``game_finished`` batch, where its cut is the whole export.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.table import SeedRevealed
from services.history.export import GameNotFinished, build_export
from services.history.records import Entry
from services.history.replay import Replay, replay


class DisputeSealed(Exception):
    """The round's bundle must wait: it would show what the rules still hide (409 ``dispute_sealed``).
    ``reason``: ``round_secret`` (the round's seed is not revealed yet) or ``game_running`` (it is,
    but the history up to its reveal also holds the next round's hidden deal)."""

    code = "dispute_sealed"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def reveal_end(rp: Replay, round_number: int) -> int | None:
    """The last version of the batch that revealed ``round_number``'s seed (None: not revealed)."""
    for batch in rp.batches:
        if any(
            isinstance(item.event, SeedRevealed) and item.event.round == round_number for item in batch.items
        ):
            return batch.items[-1].version
    return None


def sealed_reason(entries: Sequence[Entry], round_number: int | None) -> DisputeSealed | None:
    """Why a bundle of ``round_number`` cannot be built yet (None: it can)."""
    rp = replay(entries)
    over = rp.final is not None and rp.final.status in ("finished", "closed")
    what = "the whole game" if round_number is None else f"round {round_number}"
    if round_number is not None and reveal_end(rp, round_number) is None:
        if over:
            return None  # a closed table's unplayed round: the bundle is the whole export
        return DisputeSealed(
            "round_secret",
            f"The bundle of {what} waits for the end of round {round_number}'s reveal: its seed is "
            "still secret, and its draws cannot be shown or checked before then.",
        )
    if not over:
        return DisputeSealed(
            "game_running",
            f"The bundle of {what} waits for the end of the game: the history up to {what}'s reveal "
            "also holds the next round's hidden deal, which no one may see before the game ends.",
        )
    return None


def build_cut_export(entries: Sequence[Entry], round_number: int | None) -> dict[str, Any]:
    """The export of a finished (or closed) game, cut at the end of ``round_number``'s reveal
    (``None``, or a round revealed only at the end: the whole export)."""
    sealed = sealed_reason(entries, round_number)
    if sealed is not None:
        raise sealed
    full = build_export(entries)
    if round_number is None:
        return full
    rp = replay(entries)
    end = reveal_end(rp, round_number)
    if end is None or end >= entries[-1].version:
        return full
    kept = [entry for entry in entries if entry.version <= end]
    first = replay(kept)
    later = {r: rp.revealed[r] for r in sorted(_pending(first)) if r in rp.revealed}
    cut_rp = replay(kept, later)
    if cut_rp.table is None or cut_rp.final is None:
        raise GameNotFinished("The cut history cannot be re-run.")
    scores = list(cut_rp.table.rules.scores(cut_rp.final.game_state))
    doc = {key: value for key, value in full.items() if key not in ("scores", "winners", "closed")}
    doc["revealed_seeds"] = {str(r): seed.hex() for r, seed in sorted(first.revealed.items())}
    doc["entries"] = [item for item in full["entries"] if item["version"] <= end]
    doc["head"] = {"version": kept[-1].version, "hash": kept[-1].hash}
    doc["cut"] = {"round": round_number, "version": end, "scores": scores}
    doc["later_seeds"] = {str(r): seed.hex() for r, seed in later.items()}
    return doc


def _pending(rp: Replay) -> set[int]:
    return {r for batch in rp.batches for r in batch.pending}
