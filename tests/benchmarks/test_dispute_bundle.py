"""Dispute bundles, measured (docs/benchmarks.md "Dispute bundles"): the size a bundle adds to an
export, and the time to verify one offline. Prints the figures; asserts only that what it measured
verifies. Run it with ``-s`` to see them:
``PYTHONPATH=$PWD python -m pytest tests/benchmarks/test_dispute_bundle.py -s -p no:randomly``."""

from __future__ import annotations

import gzip
import json
import time

import pytest

from domain.games import game_names, spec
from services.disputes.bundle import build_bundle, verify_bundle
from services.fairness.signing import sign_receipt
from services.fairness.transparency.leaves import heads_of_stream
from services.history.export import build_export
from services.history.verify import verify_export
from tests.services.history.test_bundle import RING, public_log
from tests.support.recorded import recorded_random_game

T0 = 1_800_000_000
RUNS = 3


def _best(run) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def _kb(doc: object) -> tuple[float, float]:
    raw = json.dumps(doc, separators=(",", ":")).encode()
    return len(raw) / 1024, len(gzip.compress(raw)) / 1024


@pytest.mark.thorough
def test_the_size_and_verification_time_of_a_round_two_bundle_against_its_export() -> None:
    ring = RING  # the key that signs the in-memory log's checkpoint too
    print("\ngame        players  export KB (gz)   bundle r2 KB (gz)   of which views KB", end="")
    print("   verify export   verify bundle")
    for game in game_names():
        g = recorded_random_game(game, min(max(4, spec(game).min_players), spec(game).max_players), seed=7)
        game_id = g.state.game_id
        receipts = [
            sign_receipt({"game_id": game_id, "version": v, "hash": h}, ring.current, T0)
            for v, h in g.receipts
        ]
        extra = {"keys": ring.public_document(), "log": public_log(heads_of_stream(game_id, g.entries))}
        export = build_export(g.entries, ring.public_document())
        bundle = json.loads(json.dumps(build_bundle(g.entries, {"round": 2, "seat": 1}, receipts, extra)))
        assert verify_bundle(bundle).ok
        views_kb, _ = _kb(bundle["views"])
        export_kb, export_gz = _kb(export)
        bundle_kb, bundle_gz = _kb(bundle)
        t_export = _best(lambda: verify_export(json.loads(json.dumps(export))))  # noqa: B023
        t_bundle = _best(lambda: verify_bundle(bundle))  # noqa: B023
        print(
            f"{game:<11} {4:>7}  {export_kb:7.1f} ({export_gz:5.1f})   {bundle_kb:8.1f} ({bundle_gz:5.1f})"
            f"   {views_kb:17.1f}   {t_export * 1000:10.0f} ms   {t_bundle * 1000:10.0f} ms"
            f"   [{len(g.entries)} entries, cut at v{bundle['export']['head']['version']}, "
            f"{len(bundle['views'])} views]"
        )
