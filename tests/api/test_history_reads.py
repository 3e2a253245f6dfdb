"""Exports and time travel of long games: built off the event loop, once per (game, version), and
the same as from scratch whichever way a client walks through the versions."""

from __future__ import annotations

import random
from typing import Any

import anyio
import msgspec
import pytest

from domain.games import table_for
from projections.views import seat_view
from services.history.verify import verify_export
from services.table.queries import CHECKPOINT_EVERY, EncodedExport
from tests.api.conftest import Api
from tests.api.test_full_game import all_events, finished_game


@pytest.mark.thorough
def test_time_travel_from_kept_checkpoints_equals_the_fold_from_the_start(api: Api) -> None:
    final = finished_game(api, "six-nimmt", 3, seed=21)
    game_id, head = final["game_id"], final["version"]
    assert head > 2 * CHECKPOINT_EVERY, head  # the walk crosses several checkpoints
    table = table_for("six-nimmt")
    decoded = [
        msgspec.convert({k: v for k, v in e.items() if k not in ("version", "by")}, table.event_type)
        for e in all_events(api, game_id)
    ]
    rng = random.Random(8)  # a seeded walk: far, back, near a checkpoint, across it
    versions = [head, 1, CHECKPOINT_EVERY, CHECKPOINT_EVERY + 1, *rng.sample(range(1, head + 1), 25)]
    for version in versions:
        state = table.fold(None, decoded[:version])
        assert state is not None
        expected = msgspec.json.decode(msgspec.json.encode(seat_view(state, version, 1)))
        assert api.view(game_id, 1, at=version) == {**expected, "clock": None}, version


@pytest.mark.thorough
def test_an_export_is_built_once_per_version_and_answered_from_memory_after(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    final = finished_game(api, "skull", 3, seed=4)
    game_id = final["game_id"]
    queries = api.client.app.state.context.queries  # type: ignore[attr-defined]
    builds: list[tuple[str, int]] = []
    build, run = queries._build_export, queries._export_builds.run
    asking = 6
    entered: list[object] = []
    all_in = anyio.Event()

    async def counted(game: str, version: int) -> EncodedExport:
        builds.append((game, version))
        await all_in.wait()  # every request reaches the shared build before it ends
        result: EncodedExport = await build(game, version)
        return result

    async def entering(key: object, compute: Any) -> EncodedExport:
        entered.append(key)
        if len(entered) == asking:
            all_in.set()
        result: EncodedExport = await run(key, compute)
        return result

    monkeypatch.setattr(queries, "_build_export", counted)
    monkeypatch.setattr(queries._export_builds, "run", entering)

    async def many() -> list[EncodedExport]:
        results: list[EncodedExport] = []

        async def one() -> None:
            results.append(await queries.export(game_id))

        async with anyio.create_task_group() as group:
            for _ in range(asking):
                group.start_soon(one)
        return results

    portal = api.client.portal
    assert portal is not None
    documents = portal.call(many)
    assert len(entered) == asking
    assert builds == [(game_id, final["version"])]
    assert all(document is documents[0] for document in documents)
    answered = api.client.get(f"/games/{game_id}/export")  # gzipped: the test client accepts it
    plain = api.client.get(f"/games/{game_id}/export", headers={"Accept-Encoding": "identity"})
    assert builds == [(game_id, final["version"])]  # both answers came from memory
    assert answered.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert answered.content == plain.content == documents[0].body
    assert "Accept-Encoding" in answered.headers["vary"] and "Accept-Encoding" in plain.headers["vary"]
    assert verify_export(answered.json()).ok


def test_a_game_still_played_is_refused_an_export_without_reading_its_stream(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = api.started()
    store = api.client.app.state.context.store  # type: ignore[attr-defined]
    reads = []
    read = store.read

    async def counted(*args: object, **kwargs: object) -> object:
        reads.append(args)
        return await read(*args, **kwargs)

    monkeypatch.setattr(store, "read", counted)
    refused = api.client.get(f"/games/{game_id}/export")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "game_not_finished"
    assert reads == []
    missing = api.client.get("/games/no-such-game/export")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "game_not_found"


@pytest.mark.thorough
def test_an_export_of_a_game_this_process_never_folded_folds_nothing_on_the_event_loop(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process played the game: this one's state cache is empty. The export names its
    document by the head version and builds it in the worker thread; the loop folds nothing."""
    final = finished_game(api, "skull", 3, seed=9)
    context = api.client.app.state.context  # type: ignore[attr-defined]
    queries, store = context.queries, context.store
    monkeypatch.setattr(queries.cache, "get", lambda game_id: None)  # as if never folded here
    loads: list[str] = []
    load = store.load

    async def counted(game_id: str, cache: Any) -> Any:
        loads.append(game_id)
        return await load(game_id, cache)

    monkeypatch.setattr(store, "load", counted)
    answered = api.client.get(f"/games/{final['game_id']}/export")
    assert answered.status_code == 200 and verify_export(answered.json()).ok
    assert loads == []
    playing = api.started()
    loads.clear()  # the joins loaded the table: only the export's own loads count
    refused = api.client.get(f"/games/{playing}/export")  # checked in the build's thread instead
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "game_not_finished"
    assert loads == []
