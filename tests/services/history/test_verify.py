"""The offline verifier: honest games verify clean, and every kind of tampering is caught and named.

Games are recorded in memory exactly as the server records them (``tests.support.recorded``),
exported, passed through JSON, then checked. A "raw" tamper edits the stored bytes (the hash chain
catches it); a "consistent rewrite" is what an attacker with the database would do: edit, then
recompute every hash, so only the seed chain, the re-run of the rules and receipts can catch it.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.games import game_names
from services.cli.verify import main
from services.history.export import build_export
from services.history.records import Entry, StoredEvent
from services.history.replay import decode_stream
from services.history.verify import UnreadableExport, verify_export, verify_file
from services.history.verify_report import Report
from services.store.event_store import EventStore
from services.store.operations import Handover
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from tests.support.recorded import RecordedGame, altered, recorded_random_game, rewrite, table_setups

GAMES = game_names()
Rows = list[tuple[StoredEvent, Any]]


@cache
def recorded(game: str) -> RecordedGame:
    """One finished four-player game per title; tests copy its export, never mutate it."""
    return recorded_random_game(game, 4, seed=7)


def export_of(entries: list[Entry]) -> dict[str, Any]:
    """The export as a client would read it back from a file."""
    doc: dict[str, Any] = json.loads(json.dumps(build_export(entries)))
    return doc


def doc_of(game: str) -> dict[str, Any]:
    return export_of(recorded(game).entries)


@cache
def clean_report(game: str) -> Report:
    return verify_export(doc_of(game))


def label_of(game: str, version: int) -> str:
    """The round bucket the clean report files a version under."""
    return next(r.label for r in clean_report(game).rounds.values() if version in r.versions)


def stored_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(e["data"]) for e in doc["entries"]]


def failing(report: Report, prefix: str) -> list[str]:
    return [f for f in report.failures() if f.startswith(prefix)]


def rewritten(game: str, change: Any) -> dict[str, Any]:
    return export_of(rewrite(recorded(game).entries, change))


# -- honest games ------------------------------------------------------------------------------


@pytest.mark.thorough
@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_every_random_game_of_every_title_verifies_clean(game: str, data: st.DataObject, seed: int) -> None:
    players, options = data.draw(table_setups(game))
    g = recorded_random_game(game, players, options, seed=seed)
    doc = export_of(g.entries)
    report = verify_export(doc, g.receipts)
    assert report.ok, report.render()
    assert {r.seed for r in report.rounds.values() if r.seed} == set(doc["revealed_seeds"].values())
    assert all(c.matched for r in report.rounds.values() for c in r.chance)


@pytest.mark.parametrize("game", GAMES)
def test_the_report_gives_every_round_its_seed_checks_and_matched_chance_outcomes(game: str) -> None:
    report = clean_report(game)
    doc = doc_of(game)
    rounds = [r for n, r in sorted(report.rounds.items()) if n > 0]
    assert [r.round for r in rounds] == list(range(1, len(doc["revealed_seeds"]) + 1))
    for r in rounds:
        assert r.seed == doc["revealed_seeds"][str(r.round)]
        assert r.outcome("seed chain") == "ok" and r.outcome("hash chain") == "ok"
    assert report.rounds[0].label == "setup" and report.rounds[0].outcome("rules re-run") == "ok"
    assert rounds[-1].outcome("final scores") == "ok"
    assert sum(len(r.chance) for r in rounds) >= 1
    text = report.render()
    assert "VERIFIED" in text and f"round {rounds[-1].round}" in text


@pytest.mark.anyio
@pytest.mark.parametrize("game", GAMES)
async def test_a_game_recorded_by_the_real_command_handler_verifies_with_its_receipts(
    game: str, fake_redis_async: Any
) -> None:
    """The verifier re-runs what the handler actually stored (random join ids, practice options)."""

    async def no_poke(_: str, __: Handover) -> None:
        return None

    handler = GameCommands(EventStore(fake_redis_async), TokenStore(fake_redis_async), no_poke)
    game_id, _ = await handler.create(game, 3, {"seed": "7a" * 32})
    for seat in range(3):
        await handler.join(game_id, f"P{seat}", f"cs{seat}")
    rng, receipts = random.Random(4), []
    for step in range(5000):
        folded = await handler.load(game_id)
        if folded.state.status == "finished":
            break
        seat = rng.choice(sorted(folded.table.to_act(folded.state)))
        command = rng.choice(folded.table.legal_commands(folded.state, seat))
        outcome = await handler.command(game_id, seat, f"c{step}", msgspec.to_builtins(command), None)
        receipts.append((outcome.version, outcome.hash))
    doc = export_of(await handler.store.read(game_id, after=0))
    assert doc["practice"] is True
    report = verify_export(doc, receipts)
    assert report.ok, report.render()


# -- raw tampering: the hash chain names the version ------------------------------------------


@pytest.mark.thorough
@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_changing_any_single_byte_of_any_entry_breaks_the_chain_at_its_version(
    game: str, data: st.DataObject
) -> None:
    doc = doc_of(game)
    index = data.draw(st.integers(0, len(doc["entries"]) - 1))
    text = doc["entries"][index]["data"]
    position = data.draw(st.integers(0, len(text) - 1))
    char = data.draw(st.sampled_from('0123456789abcdefxyz",:{}[]').filter(lambda c: c != text[position]))
    doc["entries"][index]["data"] = text[:position] + char + text[position + 1 :]
    version = doc["entries"][index]["version"]
    report = verify_export(doc)
    # The break is named at its version. The round it is filed under is the untampered one, unless
    # the changed byte was the batch's own command id, which moves the boundary the round is read from.
    assert not report.ok
    assert f"hash chain: broken at version {version}" in report.render(), report.render()


def _position_in(text: str, start_marker: str) -> int:
    """The first letter or digit after ``start_marker`` (a byte that carries meaning)."""
    start = text.index(start_marker) + len(start_marker)
    return next(i for i in range(start, len(text)) if text[i].isalnum())


def _target(game: str, doc: dict[str, Any], kind: str) -> tuple[int, int]:
    """(entry index, position) of a byte of the given kind in the stored data."""
    rows = stored_rows(doc)
    if kind == "command":
        index = next(i for i, r in enumerate(rows) if r.get("command", {}).get("kind") == "command")
        return index, _position_in(doc["entries"][index]["data"], '"body":{')
    if kind == "seed":
        index = next(i for i, r in enumerate(rows) if r["event"]["type"] == "seed_revealed")
        return index, _position_in(doc["entries"][index]["data"], '"seed":"')
    if kind == "chance outcome":
        version = next(c.version for r in clean_report(game).rounds.values() for c in r.chance)
        index = version - 1
    else:
        index = len(rows) // 2
    return index, _position_in(doc["entries"][index]["data"], '"event":{"type":"') + 3


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("kind", ["event", "command", "seed", "chance outcome"])
def test_one_changed_byte_in_an_event_command_seed_or_chance_outcome_is_named(game: str, kind: str) -> None:
    doc = doc_of(game)
    index, position = _target(game, doc, kind)
    text = doc["entries"][index]["data"]
    doc["entries"][index]["data"] = (
        text[:position] + ("1" if text[position] != "1" else "2") + text[position + 1 :]
    )
    version = index + 1
    report = verify_export(doc)
    assert not report.ok
    assert failing(report, f"{label_of(game, version)}: hash chain: broken at version {version}"), (
        report.render()
    )


@pytest.mark.parametrize("game", GAMES)
def test_a_deleted_duplicated_or_swapped_entry_is_named_by_version(game: str) -> None:
    middle = len(doc_of(game)["entries"]) // 2
    deleted = doc_of(game)
    del deleted["entries"][middle]
    assert failing(
        verify_export(deleted), f"{label_of(game, middle + 2)}: hash chain: version {middle + 1} is missing"
    )
    duplicated = doc_of(game)
    duplicated["entries"].insert(middle, dict(duplicated["entries"][middle]))
    assert any(f"version {middle + 1} appears twice" in f for f in verify_export(duplicated).failures())
    swapped = doc_of(game)
    entries = swapped["entries"]
    entries[middle], entries[middle + 1] = entries[middle + 1], entries[middle]
    assert any(f"version {middle + 1} is out of order" in f for f in verify_export(swapped).failures())


# -- consistent rewrites: the rules and the seed chain catch what the hash chain cannot --------


@pytest.mark.parametrize("game", GAMES)
def test_a_consistently_rewritten_chance_outcome_fails_the_re_derivation_of_its_round(game: str) -> None:
    outcomes = [c for r in clean_report(game).rounds.values() for c in r.chance]
    for outcome in (outcomes[0], outcomes[-1]):

        def forge(rows: Rows, version: int = outcome.version) -> Rows:
            stored, event = rows[version - 1]
            rows[version - 1] = (stored, altered(event, 4))
            return rows

        report = verify_export(rewritten(game, forge))
        expected = f"round {outcome.round}: chance outcomes: version {outcome.version}"
        assert failing(report, expected), report.render()
        assert not failing(report, f"round {outcome.round}: hash chain")


@pytest.mark.parametrize("game", GAMES)
def test_a_consistently_rewritten_command_fails_the_re_run_of_its_round(game: str) -> None:
    g = recorded(game)
    table, _, items, _ = decode_stream(g.entries)
    assert table is not None
    rows = stored_rows(doc_of(game))
    for index in range(len(rows) // 2, len(rows)):
        record = rows[index].get("command")
        if not record or record["kind"] != "command":
            continue
        state = table.fold(None, [item.event for item in items[:index]])
        assert state is not None
        others = [msgspec.to_builtins(c) for c in table.legal_commands(state, record["seat"])]
        others = [c for c in others if c != record["body"]]
        if others:
            break
    else:
        pytest.fail("no command with a legal alternative")

    def forge(rows_: Rows) -> Rows:
        stored, event = rows_[index]
        assert stored.command is not None
        command = msgspec.structs.replace(stored.command, body=others[0])
        rows_[index] = (msgspec.structs.replace(stored, command=command), event)
        return rows_

    report = verify_export(rewritten(game, forge))
    label = label_of(game, index + 1)
    assert failing(report, f"{label}: rules re-run: "), report.render()
    assert not any("hash chain" in f for f in report.failures())


@pytest.mark.parametrize("game", GAMES)
def test_a_consistently_rewritten_revealed_seed_fails_the_seed_chain_of_its_round(game: str) -> None:
    rows = stored_rows(doc_of(game))
    index = next(i for i, r in enumerate(rows) if r["event"]["type"] == "seed_revealed")
    round_number = rows[index]["event"]["round"]

    def forge(rows_: Rows) -> Rows:
        stored, event = rows_[index]
        rows_[index] = (stored, {**event, "seed": "ab" * 32})
        return rows_

    report = verify_export(rewritten(game, forge))
    assert failing(report, f"round {round_number}: seed chain: "), report.render()
    if clean_report(game).rounds[round_number].chance:
        assert failing(report, f"round {round_number}: chance outcomes: ")


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("how", ["deleted", "duplicated", "swapped"])
def test_a_consistently_deleted_duplicated_or_reordered_event_fails_the_re_run(game: str, how: str) -> None:
    rows = stored_rows(doc_of(game))
    # a batch of at least two events past the middle, so the edit stays inside one batch
    index = next(
        i
        for i in range(len(rows) // 2, len(rows) - 1)
        if "command" in rows[i] and "command" not in rows[i + 1] and rows[i]["event"] != rows[i + 1]["event"]
    )

    def forge(rows_: Rows) -> Rows:
        if how == "deleted":
            del rows_[index + 1]
        elif how == "duplicated":
            rows_.insert(index + 1, rows_[index + 1])
        else:
            rows_[index], rows_[index + 1] = rows_[index + 1], rows_[index]
        return rows_

    report = verify_export(rewritten(game, forge))
    assert not report.ok
    assert any(": rules re-run: " in f or ": records: " in f for f in report.failures()), report.render()
    assert not any("hash chain" in f for f in report.failures())


@pytest.mark.parametrize("game", GAMES)
def test_consistently_rewritten_final_scores_are_caught(game: str) -> None:
    def forge(rows_: Rows) -> Rows:
        stored, event = rows_[-1]
        rows_[-1] = (stored, {**event, "scores": [s + 1 for s in event["scores"]]})
        return rows_

    report = verify_export(rewritten(game, forge))
    last = max(report.rounds.values(), key=lambda r: r.round).label
    assert failing(report, f"{last}: final scores: "), report.render()


@pytest.mark.parametrize("game", GAMES)
def test_a_receipt_from_mid_game_no_longer_matches_after_a_rewrite_before_it(game: str) -> None:
    g = recorded(game)
    receipt = g.receipts[len(g.receipts) // 2]
    assert verify_export(doc_of(game), [receipt]).ok
    outcome = next(c for r in clean_report(game).rounds.values() for c in r.chance)
    assert outcome.version < receipt[0]

    def forge(rows_: Rows) -> Rows:
        stored, event = rows_[outcome.version - 1]
        rows_[outcome.version - 1] = (stored, altered(event, 4))
        return rows_

    report = verify_export(rewritten(game, forge), [receipt])
    expected = f"receipts: the history no longer holds hash {receipt[1][:16]}… at version {receipt[0]}"
    # an unsigned receipt is named, but proves nothing on its own (anyone can write one)
    assert any(expected in f and "by an unsigned receipt" in f for f in report.unproven()), report.render()
    assert not any(": receipts: " in f for f in report.failures()), report.render()


@pytest.mark.thorough
def test_a_game_longer_than_one_seed_chain_verifies_against_both_commitments() -> None:
    g = recorded_random_game("six-nimmt", 2, {"rounds": 66}, seed=1)
    doc = export_of(g.entries)
    assert len(doc["commitments"]) == 2
    report = verify_export(doc)
    assert report.ok, report.failures()
    assert report.rounds[65].outcome("seed chain") == "ok" and report.rounds[66].seed

    def forge(rows_: Rows) -> Rows:
        index = next(i for i, (_, e) in enumerate(rows_) if e["type"] == "seed_revealed" and e["round"] == 65)
        stored, event = rows_[index]
        rows_[index] = (stored, {**event, "seed": "ab" * 32})
        return rows_

    assert failing(verify_export(export_of(rewrite(g.entries, forge))), "round 65: seed chain: ")


@pytest.mark.parametrize("game", GAMES)
def test_a_withheld_seed_is_named_and_its_outcomes_cannot_be_re_derived(game: str) -> None:
    rows = stored_rows(doc_of(game))
    index = next(i for i, r in enumerate(rows) if r["event"]["type"] == "seed_revealed")
    round_number = rows[index]["event"]["round"]

    def forge(rows_: Rows) -> Rows:
        del rows_[index]
        return rows_

    report = verify_export(rewritten(game, forge))
    assert failing(report, f"round {round_number}: seed chain: round {round_number} is over but its seed"), (
        report.render()
    )
    if clean_report(game).rounds[round_number].chance:
        assert any(
            "cannot be re-derived" in f for f in failing(report, f"round {round_number}: chance outcomes")
        )


def test_a_stream_whose_first_record_is_garbage_is_reported_not_raised() -> None:
    doc = doc_of("skull-king")
    doc["entries"][0]["data"] = "garbage"
    report = verify_export(doc)
    assert failing(report, "setup: hash chain: broken at version 1")
    assert failing(report, "setup: records: ")


# -- the header is checked, never trusted -------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_a_header_that_disagrees_with_the_stream_is_named(game: str) -> None:
    doc = doc_of(game)
    doc["revealed_seeds"]["2"] = "cd" * 32
    doc["scores"] = [s + 5 for s in doc["scores"]]
    doc["commitments"][0] = "ef" * 32
    failures = verify_export(doc).failures()
    assert any(f.startswith("round 2: export header: the export lists seed") for f in failures)
    assert any(": export header: scores" in f for f in failures)
    assert any(f.startswith("setup: seed chain: the export's commitments") for f in failures)


# -- files and the command line ------------------------------------------------------------------


def test_main_exits_0_on_a_clean_file_and_prints_every_round(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(doc_of("skull-king")), encoding="utf-8")
    g = recorded("skull-king")
    version, hash_ = g.receipts[3]
    assert main([str(path), "--receipt", f"{version}:{hash_}"]) == 0
    out = capsys.readouterr().out
    assert "VERIFIED" in out and "round 10" in out and "setup" in out
    assert verify_file(path).ok


def test_main_exits_1_and_prints_the_failing_round_and_check(tmp_path: Path, capsys: Any) -> None:
    doc = doc_of("skull-king")
    doc["entries"][56]["data"] = doc["entries"][56]["data"].replace('"seat":', '"seat": ', 1)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "NOT VERIFIED" in out
    assert f"{label_of('skull-king', 57)}: hash chain: broken at version 57" in out


@pytest.mark.parametrize(
    "content",
    [b"not json", b"\xff\xfe", b'{"format": "something-else"}', b'{"format": "tablestream-export/1"}'],
)
def test_main_exits_2_on_a_file_that_is_not_an_export(tmp_path: Path, capsys: Any, content: bytes) -> None:
    path = tmp_path / "game.json"
    path.write_bytes(content)
    assert main([str(path)]) == 2
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(UnreadableExport):
        verify_file(path)


def test_main_exits_2_on_a_missing_file(tmp_path: Path) -> None:
    assert main([str(tmp_path / "absent.json")]) == 2
