"""Signed receipts against an export, offline (services.disputes.receipt_check,
``tablestream verify --receipts``).

Games are recorded in memory as the server records them (``tests.support.recorded``); the service's
receipts are signed with a key ring made here, exported with the game, and passed through JSON."""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from services.cli.verify import main
from services.disputes.receipt_check import RECEIPTS_FORMAT, verify_with_receipts
from services.fairness.signing import KeyRing, SigningKey, receipt_message, sign_receipt
from services.history.export import build_export
from services.history.records import Entry, StoredEvent
from tests.support.recorded import RecordedGame, recorded_random_game, rewrite

T0 = 1_800_000_000
Rows = list[tuple[StoredEvent, Any]]


@cache
def recorded() -> RecordedGame:
    return recorded_random_game("skull", 3, seed=11)


@cache
def ring() -> KeyRing:
    return KeyRing.generate(T0, "tables.example")


def game_id() -> str:
    return json.loads(recorded().entries[0].data)["event"]["game_id"]


def export_of(entries: list[Entry], keys: KeyRing | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(build_export(entries, (keys or ring()).public_document())))
    return doc


def signed_receipts(key: SigningKey | None = None, at: int = T0 + 10) -> list[dict[str, Any]]:
    """Every receipt the players got, signed as the service signs them."""
    signer = key or ring().current
    return [
        sign_receipt({"game_id": game_id(), "version": v, "hash": h}, signer, at + i)
        for i, (v, h) in enumerate(recorded().receipts)
    ]


def receipt_failures(report: Any) -> list[str]:
    """What the receipts prove: failures of the history, only ever from receipts the service signed."""
    return [f for f in report.failures() if ": receipts: " in f]


def unproven_receipts(report: Any) -> list[str]:
    """Receipts named as proving nothing (no valid signature of the service); they fail nothing."""
    assert report.ok, report.render()
    return [f for f in report.unproven() if ": receipts: " in f]


def test_every_signed_receipt_of_an_honest_game_is_present_and_valid() -> None:
    receipts = signed_receipts()
    report = verify_with_receipts(export_of(recorded().entries), receipts)
    assert report.ok, report.render()
    assert sum(r.checked.get("receipts", 0) for r in report.rounds.values()) == len(receipts)


def test_a_receipt_with_a_changed_hash_is_named_as_forged_and_proves_nothing() -> None:
    receipts = signed_receipts()
    receipts[4] = {**receipts[4], "hash": "00" * 32}
    named = unproven_receipts(verify_with_receipts(export_of(recorded().entries), receipts))
    version = receipts[4]["version"]
    assert named == [
        f"{named[0].split(':')[0]}: receipts: the receipt of version {version} is FORGED: "
        f"its signature does not verify with the service's key {ring().current.key_id}: it proves "
        "nothing against the service, since anyone can write one"
    ]


def test_an_unsigned_receipt_that_contradicts_the_history_is_named_and_proves_nothing() -> None:
    """One fabricated receipt must not make an honest history look rewritten."""
    version, real = recorded().receipts[3]
    fabricated = {"game_id": game_id(), "version": version, "hash": "ab" * 32}
    report = verify_with_receipts(export_of(recorded().entries), [fabricated])
    assert report.verified and receipt_failures(report) == []
    (named,) = unproven_receipts(report)
    problem = f"the history no longer holds hash {'ab' * 8}… at version {version}"
    assert f"{problem}, by an unsigned receipt" in named
    assert real != "ab" * 32


def test_a_receipt_forged_with_another_key_under_the_services_key_id_is_named_as_forged() -> None:
    forger = SigningKey.generate(T0)
    kid = ring().current.key_id
    v = recorded().receipts[2][0]
    message = receipt_message(kid, game_id(), v, "11" * 32, T0 + 5)
    forged = {"game_id": game_id(), "version": v, "hash": "11" * 32, "key_id": kid, "signed_at": T0 + 5}
    forged["signature"] = base64.b64encode(forger.sign(message)).decode()
    named = unproven_receipts(verify_with_receipts(export_of(recorded().entries), [forged]))
    assert len(named) == 1 and "is FORGED" in named[0]


def dropped_command(rows: Rows) -> Rows:
    """The last command's batch before the end is taken out (the history then runs on without it)."""
    commands = [
        i
        for i, (stored, _) in enumerate(rows)
        if stored.command is not None and stored.command.kind == "command"
    ]
    drop = commands[len(commands) // 2]
    return rows[:drop] + rows[drop + 1 :]


def swapped_commands(rows: Rows) -> Rows:
    commands = [
        i
        for i, (stored, _) in enumerate(rows)
        if stored.command is not None and stored.command.kind == "command"
    ]
    a, b = commands[len(commands) // 2], commands[len(commands) // 2 + 1]
    rows = list(rows)
    rows[a], rows[b] = rows[b], rows[a]
    return rows


@pytest.mark.parametrize("change", [dropped_command, swapped_commands], ids=["dropped", "reordered"])
def test_a_dropped_or_reordered_command_is_proved_by_the_kept_receipts(change: Any) -> None:
    doc = export_of(rewrite(recorded().entries, change))
    failures = receipt_failures(verify_with_receipts(doc, signed_receipts()))
    assert failures, "the kept receipts must catch the rewrite"
    assert all("proof of a rewritten history" in f for f in failures), failures


def test_receipts_signed_by_an_unknown_key_or_outside_the_keys_period_are_named() -> None:
    stranger = KeyRing.generate(T0)
    unknown = signed_receipts(stranger.current)[:1]
    expired_ring = ring().rotate(T0 + 100, overlap=0)
    late = signed_receipts(expired_ring.keys[0], at=T0 + 500)[1:2]
    failures = unproven_receipts(
        verify_with_receipts(export_of(recorded().entries, expired_ring), unknown + late)
    )
    assert len(failures) == 2
    assert (
        f"is signed by key {stranger.current.key_id}, which is not among the service's published keys"
        in failures[0]
    )
    assert (
        f"is signed by key {ring().current.key_id} at a time outside that key's validity period"
        in failures[1]
    )


def test_after_a_rotation_receipts_of_both_keys_verify_against_the_rotated_keys() -> None:
    rotated = ring().rotate(T0 + 1000, overlap=60)
    half = len(recorded().receipts) // 2
    before = signed_receipts(rotated.keys[0], at=T0 + 10)[:half]
    after = signed_receipts(rotated.current, at=T0 + 1001)[half:]
    assert {r["key_id"] for r in before} != {r["key_id"] for r in after}
    report = verify_with_receipts(export_of(recorded().entries, rotated), before + after)
    assert report.ok, report.render()


def test_a_receipt_of_another_game_is_named() -> None:
    other = sign_receipt(
        {"game_id": "g-other", "version": 3, "hash": recorded().receipts[0][1]}, ring().current, T0
    )
    named = unproven_receipts(verify_with_receipts(export_of(recorded().entries), [other]))
    assert len(named) == 1 and f"is of game g-other, not of this game {game_id()}" in named[0]


def test_an_export_whose_keys_were_swapped_names_every_receipt_key_unknown_with_the_published_keys() -> None:
    """An operator who rewrote the history and re-signed receipts with a new key of its own cannot
    pass: the player checks against the keys published apart, where that key is not."""
    impostor = KeyRing.generate(T0)
    doc = export_of(rewrite(recorded().entries, dropped_command), impostor)
    report = verify_with_receipts(doc, signed_receipts(), ring().public_document())
    assert receipt_failures(report) and all(
        "proof of a rewritten history" in f for f in receipt_failures(report)
    )
    swapped = verify_with_receipts(doc, signed_receipts())
    unknown = swapped.unproven()
    assert unknown and all("not among the service's published keys" in f for f in unknown)


def test_tablestream_verify_takes_a_downloaded_receipts_file_and_a_keys_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export, receipts, keys = tmp_path / "export.json", tmp_path / "receipts.json", tmp_path / "keys.json"
    export.write_text(json.dumps(export_of(recorded().entries)))
    receipts.write_text(
        json.dumps({"format": RECEIPTS_FORMAT, "game_id": game_id(), "receipts": signed_receipts()})
    )
    keys.write_text(json.dumps(ring().public_document()))
    assert main([str(export), "--receipts", str(receipts), "--keys", str(keys)]) == 0
    assert "VERIFIED" in capsys.readouterr().out

    forged = signed_receipts()
    forged[1] = {**forged[1], "version": forged[1]["version"] + 1}
    receipts.write_text(json.dumps(forged))  # a bare list is read too
    assert main([str(export), "--receipts", str(receipts)]) == 0  # the history is intact
    out = capsys.readouterr().out
    assert f"UNPROVEN receipts: the receipt of version {forged[1]['version']} is FORGED" in out
    assert "VERIFIED" in out

    keys.write_text("[1, 2]")
    assert main([str(export), "--receipts", str(receipts), "--keys", str(keys)]) == 2
    assert f"cannot read {keys}: the signing keys cannot be read" in capsys.readouterr().err
