"""The export of a finished game: one self-contained JSON document for the offline verifier.

It carries every stored entry exactly as stored (``data`` is the stored bytes as UTF-8 text, so
the verifier recomputes the very hashes the server chained), plus a header that restates stream
facts for human readers: the seats, the chain commitments, the revealed seeds, the result. The
verifier checks the header against the stream and trusts only the stream.

Only finished games are exported: before the end, the stream holds hidden information (hands,
hidden bids, placed discs) that no seat may see yet, and the seeds of running rounds are secret.
A table an operator closed has ended too: its export's header has ``closed`` (the reason and the
operator) instead of ``scores`` and ``winners``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from domain.kernel import Event
from domain.table import (
    GameFinished,
    PlayerJoined,
    SeedChainCommitted,
    SeedRevealed,
    TableClosed,
    TableCreated,
)
from services.history.records import Entry
from services.history.replay import CorruptStream, decode_stream

__all__ = ["FORMAT", "CorruptStream", "GameNotFinished", "build_export"]

FORMAT = "tablestream-export/1"


class GameNotFinished(Exception):
    """Export asked of a game that is not over (the API answers 409 ``game_not_finished``)."""

    code = "game_not_finished"

    def __init__(
        self, message: str = "The game is not finished; only finished games can be exported."
    ) -> None:
        super().__init__(message)
        self.message = message


def build_export(
    entries: Sequence[Entry],
    keys: dict[str, Any] | None = None,
    log: dict[str, Any] | None = None,
    *,
    running: bool = False,
) -> dict[str, Any]:
    """The export document of a finished game from its stored entries, in version order.

    ``running``: a game not over yet has a document too, without a result, for a holder of its
    secret (a backup's import checks its running games so); the API never serves one.

    ``keys``: the service's public signing keys (``services.fairness.signing.KeyRing.public_document``), so
    that receipts a player kept verify against the export alone; left out when not given.
    ``log``: the public log's inclusion proofs of the game's heads and a signed checkpoint
    (``services.fairness.transparency.log.proofs_for_game_op``, checked by
    ``services.fairness.transparency.verify``)."""
    if not entries:
        raise GameNotFinished("The game has no events; only finished games can be exported.")
    table, created, items, problem = decode_stream(entries)
    if problem is not None or table is None or created is None:
        raise CorruptStream(problem or "the stream has no table_created")
    unreadable = [item.version for item in items if item.event is None]
    if unreadable:
        raise CorruptStream(f"stored entries {unreadable[:5]} cannot be decoded")
    events: list[Event] = [item.event for item in items if item.event is not None]
    finished = next((e for e in reversed(events) if isinstance(e, GameFinished)), None)
    closed = next((e for e in reversed(events) if isinstance(e, TableClosed)), None)
    ending: dict[str, Any] = {}
    if finished is None and closed is None:
        if not running:
            raise GameNotFinished()
    elif finished is None:  # an operator closed it: no result, the reason and operator instead
        assert closed is not None
        ending = {"closed": {"reason": closed.reason, "operator": closed.operator}}
    else:
        ending = {"scores": list(finished.scores), "winners": list(finished.winners)}
    return {
        "format": FORMAT,
        **table_facts(created, events),
        "commitments": _commitments(created, events),
        "revealed_seeds": {str(e.round): e.seed for e in events if isinstance(e, SeedRevealed)},
        "entries": [
            {"version": entry.version, "hash": entry.hash, "data": entry.data.decode("utf-8")}
            for entry in entries
        ],
        "head": {"version": entries[-1].version, "hash": entries[-1].hash},
        **ending,
        **({"keys": keys} if keys is not None else {}),
        **({"log": log} if log is not None else {}),
    }


def table_facts(created: TableCreated, events: Iterable[Event | None]) -> dict[str, Any]:
    """The table as the export's header states it: what a reader takes without replaying."""
    return {
        "game_id": created.game_id,
        "game": created.game,
        "players": created.players,
        "options": created.options,
        "practice": created.practice,
        "seats": [
            {"seat": e.seat, "name": e.name, "client_seed": e.client_seed}
            for e in events
            if isinstance(e, PlayerJoined)
        ],
    }


def _commitments(created: TableCreated, events: Sequence[Event]) -> list[str]:
    """Chain 0's commitment from ``table_created``, then each fresh chain's, by chain number."""
    chains = {0: created.commitment}
    for event in events:
        if isinstance(event, SeedChainCommitted):
            chains.setdefault(event.chain, event.commitment)
    return [chains[c] for c in sorted(chains)]
