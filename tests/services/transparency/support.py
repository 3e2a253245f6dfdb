"""Recorded games written into a store's streams as the append script leaves them, for the log."""

from __future__ import annotations

from collections.abc import Sequence

from services.history.records import Entry, decode_stored
from services.store.keys import game_keys
from tests.support.recorded import RecordedGame, recorded_random_game


def finished_game(seed: int, game: str = "skull", players: int = 3) -> tuple[str, RecordedGame]:
    """A whole random game (its id is ``test-<game>-<seed>``) and its recording."""
    return f"test-{game}-{seed}", recorded_random_game(game, players, seed=seed)


def batch_ends(entries: Sequence[Entry]) -> list[int]:
    """Positions (exclusive ends) at which a batch ends: a stream cut there is one the store held."""
    ends = [i for i in range(1, len(entries)) if decode_stored(entries[i].data).command is not None]
    return [*ends, len(entries)]


def store_entries(client, game_id: str, entries: Sequence[Entry]) -> None:
    """XADD the entries not yet in the game's stream (``client``: a sync Redis)."""
    key = game_keys(game_id).events
    have = client.xlen(key)
    pipe = client.pipeline(transaction=False)
    for entry in entries[have:]:
        pipe.xadd(key, {"d": entry.data, "h": entry.hash}, id=f"0-{entry.version}")
    pipe.execute()
