"""The audit: per round seeds checked and chance outcomes re-derived, and never a secret too early.

Running games are audited at every kind of cut (always at a batch boundary, as the server stores
them) and for every viewer; what is shown is compared with the table's own redaction.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.games import game_names
from domain.table import SeedRevealed
from services.history.audit import build_audit
from services.history.export import build_export
from services.history.replay import decode_stream
from services.history.verify import verify_export
from tests.support.recorded import RecordedGame, altered, recorded_random_game, rewrite, table_setups

GAMES = game_names()


def shown(event: Any) -> Any:
    """An event as the audit (JSON) carries it."""
    return json.loads(json.dumps(msgspec.to_builtins(event)))


def viewers(players: int) -> list[tuple[str, int | None]]:
    return [("operator", None), ("spectator", None), *(("player", seat) for seat in range(players))]


def unrevealed_secrets(g: RecordedGame, revealed: int) -> list[str]:
    """Hex of every seed the server still keeps secret at this point (next rounds, the chain root)."""
    seeds = [g.seeds.round_seed(r).hex() for r in range(revealed + 1, revealed + 4)]
    return [*seeds, g.seeds.round_seed(64).hex()]


@pytest.mark.thorough
@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_a_running_game_audit_never_shows_an_unrevealed_seed_or_hidden_information_early(
    game: str, data: st.DataObject, seed: int
) -> None:
    players, options = data.draw(table_setups(game))
    g = recorded_random_game(game, players, options, seed=seed)
    cut = data.draw(st.sampled_from([v for v, _ in g.receipts[players:-1]]))
    entries = g.entries[:cut]
    table, _, items, _ = decode_stream(entries)
    assert table is not None
    events = {item.version: item.event for item in items}
    revealed = {e.round for e in events.values() if isinstance(e, SeedRevealed)}
    for viewer, seat in viewers(players):
        audit = build_audit(entries, viewer, seat)  # type: ignore[arg-type]
        text = json.dumps(audit)
        assert audit["status"] == "playing"
        assert not any(secret in text for secret in unrevealed_secrets(g, len(revealed)))
        for bucket in audit["rounds"]:
            number = bucket["round"]
            assert bucket["finished"] == (max(number, 1) in revealed)
            if not bucket["finished"]:
                assert bucket["seed"] is None and bucket["chance_outcomes"] == []
            for item in bucket["events"]:
                event = events[item["version"]]
                public = shown(table.redact(event, None, finished=False))
                if not bucket["finished"]:
                    assert item["event"] == public, (viewer, number, item)
                elif viewer == "operator":
                    assert item["event"] == shown(event)
                    if isinstance(item["event"].get("round"), int):
                        assert item["event"]["round"] in revealed or item["event"] == public
                else:
                    assert item["event"] == shown(table.redact(event, seat, finished=False))


@pytest.mark.parametrize("game", GAMES)
def test_a_finished_game_audit_shows_every_round_in_full_with_seeds_and_outcomes_checked(game: str) -> None:
    g = recorded_random_game(game, 4, seed=11)
    report = verify_export(json.loads(json.dumps(build_export(g.entries))))
    _, _, items, _ = decode_stream(g.entries)
    full = {item.version: shown(item.event) for item in items}
    for viewer, seat in viewers(4):
        audit = build_audit(g.entries, viewer, seat)  # type: ignore[arg-type]
        assert audit["status"] == "finished"
        assert all(b["finished"] for b in audit["rounds"])
        assert all(e["event"] == full[e["version"]] for b in audit["rounds"] for e in b["events"])
        seeded = [b for b in audit["rounds"] if b["round"] > 0]
        assert all(b["seed_check"]["ok"] and b["rules_match"] for b in seeded)
        outcomes = [(c["version"], b["round"]) for b in audit["rounds"] for c in b["chance_outcomes"]]
        assert all(c["matched"] for b in audit["rounds"] for c in b["chance_outcomes"])
        assert sorted(outcomes) == sorted(
            (c.version, c.round) for r in report.rounds.values() for c in r.chance
        )


@pytest.mark.parametrize("game", GAMES)
def test_the_audit_carries_the_commitments_and_the_head_hash(game: str) -> None:
    g = recorded_random_game(game, 3, seed=2)
    cut = g.receipts[len(g.receipts) // 2][0]
    audit = build_audit(g.entries[:cut], "spectator", None)
    assert audit["commitments"][0] == g.seeds.chain_commitment(0)
    assert audit["head"] == {"version": cut, "hash": g.entries[cut - 1].hash}
    assert audit["hash_chain"] == {"ok": True, "broken_at": []}


@pytest.mark.parametrize("game", GAMES)
def test_the_audit_flags_a_rewritten_chance_outcome_and_a_broken_link(game: str) -> None:
    g = recorded_random_game(game, 4, seed=11)
    clean = build_audit(g.entries, "operator", None)
    bucket, outcome = next((b, c) for b in clean["rounds"] for c in b["chance_outcomes"])
    index = outcome["version"] - 1

    def forge(rows: list[Any]) -> list[Any]:
        stored, event = rows[index]
        rows[index] = (stored, altered(event, 4))
        return rows

    forged = build_audit(rewrite(g.entries, forge), "operator", None)
    again = next(b for b in forged["rounds"] if b["round"] == bucket["round"])
    assert [c["matched"] for c in again["chance_outcomes"] if c["version"] == outcome["version"]] == [False]
    assert again["rules_match"] is False
    broken = list(g.entries)
    broken[index] = msgspec.structs.replace(broken[index], data=broken[index].data.replace(b":", b": ", 1))
    assert build_audit(broken, "operator", None)["hash_chain"]["broken_at"] == [outcome["version"]]


def test_an_unknown_viewer_or_a_player_without_a_seat_is_refused() -> None:
    g = recorded_random_game("skull-king", 3, seed=2)
    with pytest.raises(ValueError):
        build_audit(g.entries, "admin", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        build_audit(g.entries, "player", None)
