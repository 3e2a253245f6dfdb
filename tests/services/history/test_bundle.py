"""Dispute bundles offline: a round's cut export, the seat's views, the receipts, and the verdict."""

from __future__ import annotations

import base64
import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.games import game_names
from services.cli.verify import main
from services.disputes.bundle import build_bundle, receipts_of, verify_bundle
from services.fairness.signing import KeyRing, sign_receipt
from services.fairness.transparency import merkle
from services.fairness.transparency.checkpoint import open_checkpoint, sign_checkpoint
from services.fairness.transparency.leaves import Head, heads_of_stream
from services.fairness.transparency.leaves import encode as encode_leaf
from services.fairness.transparency.log import PROOFS_FORMAT, proof_document
from services.fairness.transparency.verify import LOG, check_log
from services.history.cut import DisputeSealed, build_cut_export
from services.history.records import StoredEvent
from services.history.verify import parse_entries, verify_export
from tests.support.recorded import RecordedGame, recorded_random_game, rewrite

GAMES = game_names()
T0 = 1_800_000_000
RING = KeyRing.generate(T0)


def public_log(heads: list[Head]) -> dict[str, Any]:
    """A public log holding ``heads`` after two other games' leaves, its checkpoint signed by RING,
    and the inclusion proofs of ``heads`` as ``services.fairness.transparency.log.proofs_for_game`` gives
    them."""
    others = [Head("other-game", v, f"{v:064x}") for v in (1, 2)]
    leaves = [*others, *heads]
    nodes = merkle.append(0, {}, [merkle.leaf_hash(encode_leaf(h)) for h in leaves])
    size = len(leaves)
    note = sign_checkpoint(RING, size, merkle.root(size, nodes), T0 + 60)
    proven = [
        proof_document(i, head, merkle.inclusion_proof(i, size, nodes))
        for i, head in enumerate(leaves)
        if head in heads
    ]
    return {"format": PROOFS_FORMAT, "checkpoint": note, "size": size, "leaves": proven, "pending": []}


@cache
def recorded(game: str) -> RecordedGame:
    return recorded_random_game(game, 4, seed=7)


def receipts(game: str) -> list[dict[str, Any]]:
    """The player's receipts as the service signs them."""
    game_id = recorded(game).state.game_id
    return [
        sign_receipt({"game_id": game_id, "version": v, "hash": h}, RING.current, T0 + v)
        for v, h in recorded(game).receipts
    ]


def bundle_of(game: str, round_number: int | None = 2, seat: int | None = 1) -> dict[str, Any]:
    entries = recorded(game).entries
    extra = {
        "keys": RING.public_document(),
        "log": public_log(heads_of_stream(recorded(game).state.game_id, entries)),
    }
    doc = build_bundle(entries, {"round": round_number, "seat": seat}, receipts(game), extra)
    loaded: dict[str, Any] = json.loads(json.dumps(doc))
    return loaded


def outcomes(doc: dict[str, Any]) -> dict[str, str]:
    return {check.name: check.outcome for check in verify_bundle(doc).checks}


def sentence(doc: dict[str, Any], name: str) -> str:
    return next(check.sentence for check in verify_bundle(doc).checks if check.name == name)


def with_entries(doc: dict[str, Any], change: Any) -> dict[str, Any]:
    """The bundle with its export's stream rewritten consistently (every hash recomputed)."""
    tampered = copy.deepcopy(doc)
    entries = rewrite(parse_entries(tampered["export"]), change)
    tampered["export"]["entries"] = [
        {"version": e.version, "hash": e.hash, "data": e.data.decode()} for e in entries
    ]
    tampered["export"]["head"] = {"version": entries[-1].version, "hash": entries[-1].hash}
    tampered["export"]["cut"]["version"] = entries[-1].version
    return tampered


@pytest.mark.parametrize("game", GAMES)
def test_a_bundle_of_round_two_of_a_finished_game_passes_every_check(game: str) -> None:
    report = verify_bundle(bundle_of(game))
    assert report.ok, report.render()
    assert {c.name: c.outcome for c in report.checks} == {
        "deal": "passed",
        "commands": "passed",
        "scores": "passed",
        "receipts": "passed",
        "views": "passed",
        "log": "passed",
        "export": "passed",
    }
    assert "VERIFIED: round 2" in report.render()


def test_the_cut_export_ends_with_the_batch_that_reveals_the_round_and_verifies_alone() -> None:
    entries = recorded("six-nimmt").entries
    cut = build_cut_export(entries, 2)
    assert cut["cut"]["round"] == 2 and cut["head"]["version"] < entries[-1].version
    assert "scores" not in cut and "winners" not in cut
    assert "2" in cut["revealed_seeds"] and "3" in cut["later_seeds"]
    report = verify_export(json.loads(json.dumps(cut)))
    assert report.ok, report.render()


def test_a_round_sealed_until_the_end_is_bundled_with_the_whole_export() -> None:
    entries = recorded("skull").entries
    cut = build_cut_export(entries, 2)
    if "cut" in cut:  # this recorded game's round 2 is revealed at its end: then the cut is the end
        assert cut["head"]["version"] < entries[-1].version
    else:
        assert cut["head"]["version"] == entries[-1].version and "scores" in cut


def test_a_running_game_keeps_its_bundle_sealed_with_a_sentence() -> None:
    entries = recorded("six-nimmt").entries
    running = build_cut_export(entries, 1)["head"]["version"] + 5
    with pytest.raises(DisputeSealed) as sealed:
        build_cut_export(entries[:running], 1)
    assert "waits for the end of the game" in sealed.value.message
    with pytest.raises(DisputeSealed) as early:
        build_cut_export(entries[:running], 2)
    assert "waits for the end of round 2's reveal" in early.value.message


def test_a_changed_event_in_the_round_fails_the_commands_check() -> None:
    doc = bundle_of("six-nimmt")
    start = doc["views"][0]["version"]
    tampered = copy.deepcopy(doc)
    entry = next(e for e in tampered["export"]["entries"] if e["version"] == start + 3)
    entry["data"] = entry["data"].replace('"seat":', '"seat": ', 1)
    result = outcomes(tampered)
    assert result["commands"] == "failed"
    assert "hash chain" in sentence(tampered, "commands") or "version" in sentence(tampered, "commands")


def test_a_dropped_command_with_the_players_receipts_fails_the_receipts_check() -> None:
    doc = bundle_of("six-nimmt")
    start = doc["views"][0]["version"]

    def drop(rows: list[tuple[StoredEvent, Any]]) -> list[tuple[StoredEvent, Any]]:
        # the command batch at the round's 5th version, with every record of its batch
        first = next(i for i, (stored, _) in enumerate(rows) if i + 1 >= start + 4 and stored.command)
        end = next(i for i in range(first + 1, len(rows)) if rows[i][0].command is not None)
        return rows[:first] + rows[end:]

    tampered = with_entries(doc, drop)
    result = outcomes(tampered)
    assert result["receipts"] == "failed"
    assert "no longer holds hash" in sentence(tampered, "receipts")


def test_a_forged_or_unsigned_receipt_is_named_and_does_not_turn_the_verdict() -> None:
    """A receipt without a valid signature of the service proves nothing: anyone can write one."""
    doc = bundle_of("skull-king")
    doc["receipts"][3]["hash"] = "0" * 64
    assert outcomes(doc)["receipts"] == "unproven"
    assert "FORGED" in sentence(doc, "receipts") and verify_bundle(doc).ok
    unsigned = bundle_of("skull-king")
    unsigned["receipts"] = [{"version": unsigned["receipts"][2]["version"], "hash": "1" * 64}]
    assert outcomes(unsigned)["receipts"] == "unproven" and verify_bundle(unsigned).ok
    assert "by an unsigned receipt" in sentence(unsigned, "receipts")


def test_a_fork_handed_to_another_player_is_not_the_head_in_the_public_log() -> None:
    doc = bundle_of("six-nimmt")

    def fork(rows: list[tuple[StoredEvent, Any]]) -> list[tuple[StoredEvent, Any]]:
        return rows[:-1]  # one event less at the end, every hash recomputed: a consistent history

    forked = with_entries(doc, fork)
    forked["export"]["cut"]["version"] = doc["export"]["cut"]["version"]  # the same cut claimed
    result = outcomes(forked)
    assert result["log"] == "failed"
    assert "public log holds no head of this game" in sentence(forked, "log")


def test_a_fork_that_passes_every_other_check_is_caught_by_the_log_alone() -> None:
    """Another salt on the cut's last entry: the same events, a valid chain, the rules satisfied,
    and a different head hash - the history one could hand to a second player."""
    doc = bundle_of("skull-king")

    def resalt(rows: list[tuple[StoredEvent, Any]]) -> list[tuple[StoredEvent, Any]]:
        stored, event = rows[-1]
        return [*rows[:-1], (msgspec.structs.replace(stored, salt="0" * 32), event)]

    forked = with_entries(doc, resalt)
    forked["receipts"] = []  # an arbiter, or a player who kept none: only the log can tell
    result = outcomes(forked)
    assert result["log"] == "failed"
    assert {name for name, outcome in result.items() if outcome == "failed"} == {"log"}
    assert "forked or rewritten" in sentence(forked, "log")


def test_a_checkpoint_signed_by_an_unknown_key_fails_the_log_check() -> None:
    doc = bundle_of("skull-king")
    doc["keys"] = KeyRing.generate(T0).public_document()
    assert outcomes(doc)["log"] == "failed"
    assert "cannot be trusted" in sentence(doc, "log")


def test_a_view_that_differs_from_the_history_fails_the_views_check() -> None:
    doc = bundle_of("skull-king")
    doc["views"][1]["view"]["scores"] = [99, 0, 0, 0]
    assert outcomes(doc)["views"] == "failed"
    assert f"version {doc['views'][1]['version']}" in sentence(doc, "views")


def test_a_forged_later_seed_fails_the_deal_of_the_next_round() -> None:
    doc = bundle_of("six-nimmt")
    doc["export"]["later_seeds"]["3"] = "00" * 32
    report = verify_bundle(doc)
    assert not report.ok and outcomes(doc)["export"] == "failed"
    assert report.export is not None
    assert any("round 3: seed chain" in f for f in report.export.failures())


def test_stated_scores_at_the_cut_are_recomputed() -> None:
    doc = bundle_of("six-nimmt")
    doc["export"]["cut"]["scores"] = [0, 0, 0, 0]
    assert outcomes(doc)["scores"] == "failed"


def test_a_bundle_without_receipts_says_they_were_not_checked() -> None:
    doc = bundle_of("skull-king")
    doc["receipts"] = []
    report = verify_bundle(doc)
    assert report.ok and outcomes(doc)["receipts"] == "not checked"


def test_receipts_evidence_is_read_from_a_list_or_an_object_and_bad_ones_are_named() -> None:
    good = '{"receipts": [{"version": 3, "hash": "' + "a" * 64 + '", "signature": "x"}]}'
    assert receipts_of([good, "[]"]) == [{"version": 3, "hash": "a" * 64, "signature": "x"}]
    with pytest.raises(ValueError, match="64-hex"):
        receipts_of(['[{"version": 3, "hash": "nope"}]'])


def test_tablestream_verify_tells_a_bundle_from_an_export(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle_of("skull-king")))
    assert main([str(path)]) == 0
    assert "dispute bundle of game" in capsys.readouterr().out
    doc = bundle_of("skull-king")
    doc["export"]["cut"]["scores"] = [1, 2, 3, 4]
    path.write_text(json.dumps(doc))
    assert main([str(path)]) == 1
    assert "FAILED       scores" in capsys.readouterr().out


def _head_leaf(section: dict[str, Any]) -> dict[str, Any]:
    """The section's proof of the game's final head (its heads are in stream order)."""
    leaf: dict[str, Any] = section["leaves"][-1]
    return leaf


def _no_head_proof(section: dict[str, Any]) -> None:
    section["leaves"].pop()


def _no_earlier_head_proof(section: dict[str, Any]) -> None:
    section["leaves"].pop(-2)


def _pending_head(section: dict[str, Any]) -> None:
    section["pending"].append(section["leaves"].pop()["version"])


def _bad_proof(section: dict[str, Any]) -> None:
    _head_leaf(section)["proof"][0] = base64.b64encode(bytes(32)).decode()


def _unreadable_leaf(section: dict[str, Any]) -> None:
    _head_leaf(section)["leaf"] = "not base64!"


def _no_checkpoint(section: dict[str, Any]) -> None:
    section["checkpoint"] = None


def _signed_by_another_key(section: dict[str, Any]) -> None:
    signed, _ = open_checkpoint(section["checkpoint"], RING.public_keys())
    section["checkpoint"] = sign_checkpoint(KeyRing.generate(T0), signed.size, signed.root, T0 + 60)


@pytest.mark.parametrize(
    ("tamper", "bundle_outcome", "bundle_says", "export_says"),
    [
        (None, "passed", "of the public log of", None),
        (_no_head_proof, "failed", "holds no head of this game", "pending: is not in the log yet"),
        (
            _no_earlier_head_proof,
            "passed",
            "of the public log of",
            "has no proof that it is in the public log",
        ),
        (
            _pending_head,
            "not checked",
            "after its latest checkpoint",
            "pending: appended after the checkpoint",
        ),
        (_bad_proof, "failed", "does not put the head", "its inclusion proof does not lead to the root"),
        (_unreadable_leaf, "failed", "proof for the head cannot be read", "leaf of the log section is not"),
        (_no_checkpoint, "not checked", "published no checkpoint", "pending: no checkpoint when this export"),
        (_signed_by_another_key, "failed", "cannot be trusted", "the log's checkpoint is refused"),
    ],
)
def test_each_outcome_of_the_log_check_is_said_in_the_bundle_s_words_and_in_the_export_s(
    tamper: Any, bundle_outcome: str, bundle_says: str, export_says: str | None
) -> None:
    """One reading of the log section (``services.fairness.transparency.verify.read_proofs``) for both: a
    bundle built before the log could tell leaves it not checked; an export made before its newest
    head was in a checkpoint is pending (not verified, not failed), and fails anything else."""
    doc = bundle_of("skull", round_number=None, seat=None)
    if tamper is not None:
        tamper(doc["log"])
    check = next(c for c in verify_bundle(doc).checks if c.name == "log")
    assert (check.outcome, bundle_says in check.sentence) == (bundle_outcome, True), check.sentence

    export = {**doc["export"], "log": doc["log"]}
    report = verify_export(export)
    check_log(report, export, parse_entries(export), RING.public_keys())
    said = [detail for r in report.rounds.values() for name, detail in r.failures if name == LOG]
    waits = [detail for r in report.rounds.values() for name, detail in r.pending if name == LOG]
    if export_says is None:
        assert said == waits == [] and sum(r.checked.get(LOG, 0) for r in report.rounds.values()) > 1
    elif export_says.startswith("pending: "):
        assert said == [] and waits and export_says.removeprefix("pending: ") in waits[0], waits
        assert report.ok and not report.verified
    else:
        assert said and export_says in said[0], said  # a head not proven is named again after


def test_a_bundle_without_a_log_section_says_the_log_was_not_checked() -> None:
    doc = bundle_of("skull")
    del doc["log"]
    assert outcomes(doc)["log"] == "not checked"
    assert sentence(doc, "log") == "The bundle carries no proofs from the public log."


def test_a_bundle_s_verdict_names_its_keys_and_witnesses_and_a_required_log_it_lacks_fails_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle_of("skull")))
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert f"NOT CHECKED  keys: The signing keys are the file's own (key ids: {RING.current.key_id})" in out
    assert "NOT CHECKED  witnesses:" in out
    assert out.splitlines()[-2] == "VERIFIED: round 2 was played as the rules and the committed seeds say."
    assert out.splitlines()[-1] == (
        "Not checked, so not covered by this verdict: keys, witnesses, consistency (see above)."
    )
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(RING.public_document()))
    assert main([str(path), "--keys", str(keys), "--require", "log,receipts,keys"]) == 0
    assert f"PASSED       keys: The signing keys are those of {keys}" in capsys.readouterr().out
    doc = bundle_of("skull")
    del doc["log"]
    path.write_text(json.dumps(doc))
    assert main([str(path), "--keys", str(keys), "--require", "log,keys"]) == 1
    assert (
        capsys.readouterr().out.splitlines()[-1]
        == "NOT VERIFIED: required but not passed: log (not checked)."
    )
