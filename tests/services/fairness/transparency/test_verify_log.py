"""``tablestream verify`` checks an export's heads against the public log: inclusion in a checkpoint
signed by a key valid then; two different exports of one game cannot both pass."""

from __future__ import annotations

import base64
import http.server
import json
import random
import threading
from pathlib import Path

import fakeredis
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from services.cli.verify import PENDING_EXIT
from services.cli.verify import main as verify_main
from services.fairness.signing import KeyRing, parse_note, raw_public
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency import leaves
from services.fairness.transparency.log import TransparencyLog, note_loggable, with_next_checkpoint
from services.fairness.transparency.verify import check_log
from services.history.chat_export import GENESIS, chat_section
from services.history.export import build_export
from services.history.verify import verify_export
from services.store import chat
from services.store.event_store import SyncEventStore
from tests.services.fairness.transparency.support import batch_ends, store_entries
from tests.support.play import play_random
from tests.support.recorded import RecordedGame, new_recorded_game

T0 = 1_800_000_000
GAME_ID = "g-disputed"


def played(seed: int) -> RecordedGame:
    """One table (the same id and deal secret), played out with the moves of ``seed``."""
    g = new_recorded_game("skull", 3, seed=0, game_id=GAME_ID)
    play_random(g, random.Random(seed))
    return g


@pytest.fixture
def ring() -> KeyRing:
    return KeyRing.generate(T0, "tables.example")


@pytest.fixture
def tlog(fake_redis) -> TransparencyLog:
    return TransparencyLog(SyncEventStore(fake_redis))


def logged(tlog: TransparencyLog, ring: KeyRing, g: RecordedGame, at: int = T0 + 10) -> dict:
    store_entries(tlog.redis, GAME_ID, g.entries)
    note_loggable(tlog.redis, GAME_ID, g.entries[-1].version)
    tlog.append_pending()
    tlog.publish(ring, at)
    return tlog.proofs_for_game(GAME_ID)


def verified(tmp_path: Path, export: dict, capsys) -> tuple[int, str]:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    code = verify_main([str(path)])
    return code, capsys.readouterr().out


def test_an_honest_export_s_heads_are_proven_in_the_signed_log(tmp_path, tlog, ring, capsys) -> None:
    g = played(1)
    export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g))
    code, out = verified(tmp_path, export, capsys)
    assert code == 0, out
    report = verify_export(export)
    check_log(report, export, g.entries, ring.public_keys())
    assert report.ok and sum(r.checked.get("public log", 0) for r in report.rounds.values()) >= 3


def test_of_two_different_exports_of_one_game_only_the_logged_one_passes(
    tmp_path, tlog, ring, capsys
) -> None:
    first, second = played(1), played(2)
    assert first.entries[-1].hash != second.entries[-1].hash
    proofs = logged(tlog, ring, first)
    assert verify_export(build_export(second.entries)).ok  # on its own, the other history is consistent
    code, out = verified(tmp_path, build_export(second.entries, ring.public_document(), proofs), capsys)
    assert code == 1
    assert "the log holds another history of this game" in out
    code, _ = verified(tmp_path, build_export(first.entries, ring.public_document(), proofs), capsys)
    assert code == 0


def test_an_export_whose_log_section_claims_its_own_heads_is_caught_by_the_inclusion_proofs(
    tmp_path, tlog, ring, capsys
) -> None:
    first, second = played(1), played(2)
    proofs = logged(tlog, ring, first)

    forged = json.loads(json.dumps(proofs))
    for leaf, head in zip(forged["leaves"], leaves.heads_of_stream(GAME_ID, second.entries), strict=False):
        leaf["version"], leaf["hash"] = head.version, head.hash
        leaf["leaf"] = base64.b64encode(leaves.encode(head)).decode()
    code, out = verified(tmp_path, build_export(second.entries, ring.public_document(), forged), capsys)
    assert code == 1 and "is not in the log" in out


def test_a_checkpoint_signed_by_a_key_not_in_the_export_s_keys_is_refused(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    proofs = logged(tlog, ring, g)
    other = KeyRing.generate(T0, "tables.example")
    code, out = verified(tmp_path, build_export(g.entries, other.public_document(), proofs), capsys)
    assert code == 1 and "No known key of the log signed this checkpoint" in out


def test_a_checkpoint_signed_after_its_key_expired_is_refused(tmp_path, tlog, ring, capsys) -> None:
    g = played(1)
    rotated = ring.rotate(T0 + 100, overlap=10)  # the first key signs validly until T0 + 110
    proofs = logged(tlog, KeyRing((rotated.keys[0],)), g, at=T0 + 500)
    code, out = verified(tmp_path, build_export(g.entries, rotated.public_document(), proofs), capsys)
    assert code == 1 and "not valid at its timestamp" in out


def test_a_final_head_appended_after_the_checkpoint_is_pending_and_passes_once_checkpointed(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    tlog.publish(ring, T0)  # an empty log's checkpoint
    store_entries(tlog.redis, GAME_ID, g.entries)
    note_loggable(tlog.redis, GAME_ID, g.entries[-1].version)
    tlog.append_pending()  # appended, not checkpointed yet
    proofs = tlog.proofs_for_game(GAME_ID)
    assert proofs["leaves"] == [] and g.entries[-1].version in proofs["pending"]
    code, out = verified(tmp_path, build_export(g.entries, ring.public_document(), proofs), capsys)
    assert (
        code == PENDING_EXIT and "the public log has not yet published this head; export again after" in out
    )
    assert cp.open_checkpoint(tlog.publish(ring, T0 + 20), ring.public_keys())[0].size == tlog.size()
    code, _ = verified(
        tmp_path, build_export(g.entries, ring.public_document(), tlog.proofs_for_game(GAME_ID)), capsys
    )
    assert code == 0


def exported_right_after_the_last_move(tlog: TransparencyLog, ring: KeyRing, g: RecordedGame) -> dict:
    """The export of a game whose last rounds the log's appender has not reached yet: the checkpoint
    holds the heads up to a round's end, and the section says when the next checkpoint is due."""
    heads = leaves.heads_of_stream(GAME_ID, g.entries)
    early = [e for e in g.entries if e.version <= heads[1].version]  # the creation and a round's end
    store_entries(tlog.redis, GAME_ID, early)
    note_loggable(tlog.redis, GAME_ID, early[-1].version)
    tlog.append_pending()
    tlog.publish(ring, T0)
    store_entries(tlog.redis, GAME_ID, g.entries)  # the rest is played; the appender has not run
    return build_export(
        g.entries, ring.public_document(), with_next_checkpoint(tlog.proofs_for_game(GAME_ID), DUE)
    )


DUE = T0 + 12  # 2027-01-15 08:00:12 UTC
DUE_WORDS = "the public log has not yet published this head; export again after 2027-01-15 08:00:12 UTC"


def test_an_export_whose_newest_head_is_not_in_the_log_yet_is_pending_with_the_time_to_export_again(
    tlog, ring
) -> None:
    g = played(1)
    export = exported_right_after_the_last_move(tlog, ring, g)
    proven = {leaf["version"] for leaf in export["log"]["leaves"]}
    assert g.entries[-1].version not in proven and export["log"]["pending"] == []  # not even appended
    report = verify_export(export)
    check_log(report, export, g.entries, ring.public_keys(), now=T0 + 1)
    assert report.ok and not report.verified  # not a failure, not verified either
    assert report.waiting == DUE_WORDS
    assert any(
        f"the head at version {g.entries[-1].version} is not in the log yet" in p for p in report.pending()
    )
    last = report.render().splitlines()[-1]
    assert last == f"PENDING, not yet verified: every other check passed, but {DUE_WORDS}."
    assert not any(line.startswith("VERIFIED") for line in report.render().splitlines())


def test_a_pending_export_checked_after_its_time_is_told_to_export_again_now(tlog, ring) -> None:
    g = played(1)
    export = exported_right_after_the_last_move(tlog, ring, g)
    report = verify_export(export)
    check_log(report, export, g.entries, ring.public_keys(), now=DUE + 60)
    assert report.waiting == DUE_WORDS + " (that time has passed: export again now)"


def test_tablestream_verify_says_pending_in_words_and_exits_with_its_own_code(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    code, out = verified(tmp_path, exported_right_after_the_last_move(tlog, ring, g), capsys)
    assert code == PENDING_EXIT == 3
    assert DUE_WORDS in out and "PENDING public log:" in out
    assert "NOT VERIFIED" not in out and "\nVERIFIED" not in out
    # once the appender and the publisher have run, the same game exports verified
    note_loggable(tlog.redis, GAME_ID, g.entries[-1].version)
    tlog.append_pending()
    tlog.publish(ring, T0 + 20)
    export = build_export(g.entries, ring.public_document(), tlog.proofs_for_game(GAME_ID))
    assert verified(tmp_path, export, capsys)[0] == 0


def test_an_export_made_before_the_log_signed_any_checkpoint_is_pending_too(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    store_entries(tlog.redis, GAME_ID, g.entries)
    proofs = tlog.proofs_for_game(GAME_ID)
    assert proofs["checkpoint"] is None
    code, out = verified(
        tmp_path, build_export(g.entries, ring.public_document(), with_next_checkpoint(proofs, DUE)), capsys
    )
    assert code == PENDING_EXIT and DUE_WORDS in out


def test_a_head_missing_before_a_logged_one_still_fails(tmp_path, tlog, ring, capsys) -> None:
    """The appender logs a game's heads in order: a gap below a logged head is no delay."""
    g = played(1)
    proofs = logged(tlog, ring, g)
    proofs["leaves"].pop(1)
    code, out = verified(tmp_path, build_export(g.entries, ring.public_document(), proofs), capsys)
    assert code == 1 and "has no proof that it is in the public log" in out


def verdict(tmp_path: Path, doc: dict, capsys, *args: str) -> tuple[int, str]:
    """``tablestream verify`` of ``doc`` with ``args``: its exit code and what it printed."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code = verify_main([str(path), *args])
    return code, capsys.readouterr().out


def test_a_forked_export_without_its_log_section_is_never_verified_without_saying_the_log_was_not_checked(
    tmp_path, tlog, ring, capsys
) -> None:
    honest, forked = played(1), played(2)
    logged(tlog, ring, honest)  # the log holds the honest history; the fork drops its section
    code, out = verdict(tmp_path, build_export(forked.entries, ring.public_document()), capsys)
    assert code == 0  # the forked history is consistent on its own ...
    assert "NOT CHECKED  log: The export carries no log section" in out  # ... and that is all it shows
    assert out.splitlines()[-1].startswith("Not checked, so not covered by this verdict:")
    assert "log" in out.splitlines()[-1]
    code, out = verdict(
        tmp_path, build_export(forked.entries, ring.public_document()), capsys, "--require", "log"
    )
    assert code == 1 and out.splitlines()[-1] == "NOT VERIFIED: required but not passed: log (not checked)."


def test_an_export_re_keyed_by_an_outsider_names_the_keys_it_trusted_and_fails_with_the_published_ones(
    tmp_path, tlog, ring, capsys
) -> None:
    outsider = KeyRing.generate(T0, "tables.example")
    g = played(2)
    export = build_export(g.entries, outsider.public_document(), logged(tlog, outsider, g))
    code, out = verdict(tmp_path, export, capsys)
    assert code == 0  # the file is consistent with the keys it carries ...
    own = outsider.public_keys()[0].key_id
    assert f"NOT CHECKED  keys: The signing keys are the file's own (key ids: {own})" in out
    code, out = verdict(tmp_path, export, capsys, "--require", "keys")
    assert code == 1 and "required but not passed: keys (not checked)" in out
    published = tmp_path / "published-keys.json"
    published.write_text(json.dumps(ring.public_document()), encoding="utf-8")
    code, out = verdict(tmp_path, export, capsys, "--keys", str(published))
    assert code == 1 and "No known key of the log signed this checkpoint" in out  # ... not with the service's
    assert f"PASSED       keys: The signing keys are those of {published}" in out


def test_an_honest_export_with_receipts_and_keys_apart_passes_those_grounds_and_names_the_others(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g))
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(ring.public_document()), encoding="utf-8")
    head = g.entries[-1]
    args = ("--keys", str(keys), "--receipt", f"{head.version}:{head.hash}")
    code, out = verdict(tmp_path, export, capsys, *args, "--require", "log,receipts,keys")
    assert code == 0
    for ground in ("receipts", "log", "keys"):
        assert f"PASSED       {ground}:" in out
    assert "NOT CHECKED  witnesses: No witness keys were given (--witness VKEY)" in out
    assert out.splitlines()[-1] == (
        "Not checked, so not covered by this verdict: chat, witnesses, consistency (see above)."
    )
    code, out = verdict(tmp_path, export, capsys, *args, "--require", "log,witnesses")
    assert (
        code == 1
        and out.splitlines()[-1] == "NOT VERIFIED: required but not passed: witnesses (not checked)."
    )


def test_require_takes_only_the_grounds_it_knows(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        verify_main([str(tmp_path / "any.json"), "--require", "log,trust"])
    assert refused.value.code == 2
    said = capsys.readouterr().err
    assert "--require takes a comma-separated list of log, receipts, chat, keys, witnesses, consistency" in (
        said
    )
    with pytest.raises(SystemExit) as refused:
        verify_main([str(tmp_path / "any.json"), "--witness", "alice+00000000+AAAA"])
    assert refused.value.code == 2 and "--witness" in capsys.readouterr().err


def witness(name: str) -> tuple[Ed25519PrivateKey, str]:
    """A witness's private key and its vkey."""
    private = Ed25519PrivateKey.generate()
    return private, cp.witness_key(name, raw_public(private.public_key())).vkey


def cosigned(export: dict, name: str, private: Ed25519PrivateKey, at: int = T0 + 30) -> dict:
    """``export`` with witness ``name``'s cosignature (made at ``at``) of its checkpoint, as the
    service adds it."""
    note = export["log"]["checkpoint"]
    text, _ = parse_note(note)
    line = cp.cosign(text, name, private, at)
    return {**export, "log": {**export["log"], "checkpoint": f"{note}{line}\n"}}


def test_a_checkpoint_cosigned_by_a_quorum_of_the_witnesses_given_passes_and_one_short_of_it_waits(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    (alice, alice_vkey), (_, bob_vkey) = witness("alice.example"), witness("bob.example")
    logged_export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g))
    export = cosigned(logged_export, "alice.example", alice)
    code, out = verdict(tmp_path, export, capsys, "--witness", alice_vkey, "--require", "witnesses")
    assert code == 0, out
    assert "PASSED       witnesses: The log's checkpoint is cosigned by 1 of the 1 witnesses given" in out
    both = ("--witness", alice_vkey, "--witness", bob_vkey, "--quorum", "2")
    code, out = verdict(tmp_path, export, capsys, *both)
    assert code == PENDING_EXIT
    assert (
        "PENDING      witnesses: The log's checkpoint is cosigned by only 1 of the 2 witnesses given" in out
    )
    assert out.splitlines()[-1] == (
        "PENDING, not yet verified: every other check passed, but witnesses is pending (see above)."
    )
    code, out = verdict(tmp_path, export, capsys, *both, "--require", "witnesses")
    assert code == 1 and out.splitlines()[-1] == "NOT VERIFIED: required but not passed: witnesses (pending)."


def test_a_cosignature_by_a_witness_not_given_counts_for_nothing(tmp_path, tlog, ring, capsys) -> None:
    g = played(1)
    (mallory, _), (_, alice_vkey) = witness("alice.example"), witness("alice.example")  # the same name
    logged_export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g))
    export = cosigned(logged_export, "alice.example", mallory)
    code, out = verdict(tmp_path, export, capsys, "--witness", alice_vkey)
    assert code == PENDING_EXIT and "cosigned by only 0 of the 1 witnesses given (quorum 1: none)" in out


def with_chat(tlog: TransparencyLog, ring: KeyRing) -> dict:
    """``played(1)`` with chat sent as it went (a message every third batch), logged and checkpointed,
    exported with its chat section as ``GET /games/{id}/export?chat=1`` gives it."""
    g = played(1)
    store = SyncEventStore(tlog.redis)
    for step, cut in enumerate(batch_ends(g.entries)):
        store_entries(tlog.redis, GAME_ID, g.entries[:cut])
        if step % 3 == 1:
            fields = {"seat": step % 3, "text": f"message {step}"}
            store.run(chat.append(GAME_ID, "message", fields, T0 * 1000 + step, cap=200))
    export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g))
    return {**export, "chat": chat_section(store.run(chat.stored_bytes(GAME_ID)))}


def rechained(section: dict, keep: list[int]) -> dict:
    """The chat section with only the records at positions ``keep``, renumbered and chained again
    from the start: a chat whose own chain verifies."""
    records, previous = [], GENESIS
    for number, position in enumerate(keep, start=1):
        record = {**json.loads(section["records"][position]["data"]), "n": number}
        data = chat.canonical(record)
        previous = chat.chain(previous, data)
        records.append({"n": number, "hash": previous, "data": data.decode()})
    head = {"n": len(records), "hash": previous}
    return {**section, "records": records, "head": head}


def test_a_chat_cut_or_chained_again_after_the_log_fixed_it_is_caught(tmp_path, tlog, ring, capsys) -> None:
    export = with_chat(tlog, ring)
    count = len(export["chat"]["records"])
    assert count >= 3 and export["log"]["chat"]
    code, out = verdict(tmp_path, export, capsys, "--require", "log,chat")
    assert code == 0, out
    assert "PASSED       chat: The public log fixes the chat as it stood at each of the" in out

    cut = {**export, "chat": rechained(export["chat"], list(range(count - 1)))}  # the last message cut
    code, out = verdict(tmp_path, cut, capsys)
    assert code == 1 and "FAILED       chat:" in out
    assert "which this export's chat does not hold: records were cut, removed or chained again" in out

    removed = {**export, "chat": rechained(export["chat"], [0, *range(2, count)])}  # the second one
    assert verdict(tmp_path, removed, capsys)[0] == 1


def test_a_log_section_stripped_of_its_chat_leaves_says_the_chat_was_not_checked_or_fails(
    tmp_path, tlog, ring, capsys
) -> None:
    export = with_chat(tlog, ring)
    stripped = {
        **export,
        "log": {k: v for k, v in export["log"].items() if k not in ("chat", "chat_pending")},
    }
    code, out = verdict(tmp_path, stripped, capsys)
    assert code == 0 and "NOT CHECKED  chat: The log section holds no leaf of the chat" in out
    assert verdict(tmp_path, stripped, capsys, "--require", "chat")[0] == 1
    one_less = {**export, "log": {**export["log"], "chat": export["log"]["chat"][:-1]}}
    code, out = verdict(tmp_path, one_less, capsys)
    assert code == 1 and "proves no leaf of the chat at version" in out and "its proof was removed" in out


def test_keys_fetched_from_the_service_s_url_are_named_with_where_and_when_they_came_from(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g))
    body = json.dumps(ring.public_document()).encode()

    class Keys(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path == "/.well-known/tablestream-keys"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if found else b"{}")

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/.well-known/tablestream-keys"
        code, out = verdict(tmp_path, export, capsys, "--keys", url, "--require", "keys")
        assert code == 0, out
        assert f"PASSED       keys: The signing keys are those of {url}, fetched at " in out
        missing = url.replace("tablestream-keys", "nothing")
        assert verify_main([str(tmp_path / "doc.json"), "--keys", missing]) == 2
        assert f"cannot read {missing}: the keys could not be fetched" in capsys.readouterr().err
    finally:
        server.shutdown()
        server.server_close()


def consistency_file(tmp_path: Path, tlog: TransparencyLog, old: int, new: int) -> str:
    """The log's answer to ``GET /log/consistency?from=old&to=new``, saved."""
    proof = [base64.b64encode(h).decode() for h in tlog.consistency(old, new)]
    path = tmp_path / "consistency.json"
    path.write_text(json.dumps({"from": old, "to": new, "proof": proof}), encoding="utf-8")
    return str(path)


def saved(tmp_path: Path, note: str) -> str:
    path = tmp_path / "trusted.note"
    path.write_text(note, encoding="utf-8")
    return str(path)


def test_a_checkpoint_held_before_is_joined_to_the_file_s_by_the_log_s_consistency_proof(
    tmp_path, tlog, ring, capsys
) -> None:
    earlier = played(3)
    store_entries(tlog.redis, "g-earlier", earlier.entries)
    note_loggable(tlog.redis, "g-earlier", earlier.entries[-1].version)
    tlog.append_pending()
    held = tlog.publish(ring, T0)  # a checkpoint a player saw before this game was logged
    g = played(1)
    export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g, at=T0 + 20))
    old, new = cp.parse_text(parse_note(held)[0]).size, export["log"]["size"]
    trusted = ("--trusted-checkpoint", saved(tmp_path, held))
    code, out = verdict(tmp_path, export, capsys, *trusted, "--require", "consistency")
    assert code == 1 and f"GET /log/consistency?from={old}&to={new}, with --consistency FILE" in out
    proof = ("--consistency", consistency_file(tmp_path, tlog, old, new))
    code, out = verdict(tmp_path, export, capsys, *trusted, *proof, "--require", "consistency")
    assert code == 0, out
    assert f"PASSED       consistency: The checkpoint of size {new} extends the one of size {old}" in out
    code, out = verdict(
        tmp_path, export, capsys, "--trusted-checkpoint", saved(tmp_path, export["log"]["checkpoint"])
    )
    assert code == 0 and f"The file's checkpoint is the one you hold (size {new})" in out


def test_two_checkpoints_the_log_signed_that_no_proof_joins_prove_a_fork(tmp_path, ring, capsys) -> None:
    honest, forked = a_log_on_its_own(), a_log_on_its_own()
    first, second = played(1), played(2)
    for tlog, g in ((honest, first), (forked, second)):  # one log shown to one player, another to another
        store_entries(tlog.redis, GAME_ID, g.entries)
        note_loggable(tlog.redis, GAME_ID, g.entries[-1].version)
        tlog.append_pending()
    held = honest.publish(ring, T0 + 10)
    export = build_export(second.entries, ring.public_document(), forked_proofs(forked, ring))
    assert cp.parse_text(parse_note(held)[0]).size == export["log"]["size"]
    code, out = verdict(tmp_path, export, capsys, "--trusted-checkpoint", saved(tmp_path, held))
    assert code == 1
    assert "with different roots: the log signed two trees, a fork (the two notes prove it to anyone)" in out
    logged_more(forked, played(4))  # the forked log grows: its proof from the held size cannot join them
    export = build_export(second.entries, ring.public_document(), forked_proofs(forked, ring))
    old, new = cp.parse_text(parse_note(held)[0]).size, export["log"]["size"]
    proof = ("--consistency", consistency_file(tmp_path, forked, old, new))
    code, out = verdict(tmp_path, export, capsys, "--trusted-checkpoint", saved(tmp_path, held), *proof)
    assert code == 1 and "unless the proof is damaged, the log forked" in out


def a_log_on_its_own() -> TransparencyLog:
    return TransparencyLog(SyncEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer())))


def forked_proofs(tlog: TransparencyLog, ring: KeyRing) -> dict:
    tlog.publish(ring, T0 + 20)
    return tlog.proofs_for_game(GAME_ID)


def logged_more(tlog: TransparencyLog, g: RecordedGame) -> None:
    store_entries(tlog.redis, "g-more", g.entries)
    note_loggable(tlog.redis, "g-more", g.entries[-1].version)
    tlog.append_pending()


def test_a_cosignature_made_after_the_signing_key_retired_does_not_count_whatever_the_checkpoint_says(
    tmp_path, tlog, ring, capsys
) -> None:
    """A retired key that leaked signs a checkpoint with a timestamp line inside its old period; the
    witness cosigns it by its own clock, long after that period: the period rests on that clock."""
    g = played(1)
    rotated = ring.rotate(T0 + 100, overlap=10)  # the first key's period ends at T0 + 110
    backdated = logged(tlog, KeyRing((rotated.keys[0],)), g, at=T0 + 50)
    alice, vkey = witness("alice.example")
    export = build_export(g.entries, rotated.public_document(), backdated)
    late = cosigned(export, "alice.example", alice, at=T0 + 100_000)
    code, out = verdict(tmp_path, late, capsys, "--witness", vkey)
    assert code == PENDING_EXIT
    assert "cosigned by only 0 of the 1 witnesses given" in out
    assert f"1 more cosigned it outside the period of the key that signed it, {rotated.keys[0].key_id}" in out
    in_time = cosigned(export, "alice.example", alice, at=T0 + 60)
    assert verdict(tmp_path, in_time, capsys, "--witness", vkey, "--require", "witnesses")[0] == 0


def test_a_pinned_key_is_the_only_one_trusted_even_in_the_file_s_own_keys(
    tmp_path, tlog, ring, capsys
) -> None:
    g = played(1)
    real = ring.current.key_id
    export = build_export(g.entries, ring.public_document(), logged(tlog, ring, g))
    code, out = verdict(tmp_path, export, capsys, "--pin", real, "--require", "keys")
    assert code == 0, out
    pinned = (
        "PASSED       keys: The signing keys are the ones pinned with --pin, found in the file (key ids: "
    )
    assert f"{pinned}{real})" in out
    outsider = KeyRing.generate(T0, "tables.example")
    both = {
        **ring.public_document(),
        "keys": [*ring.public_document()["keys"], *outsider.public_document()["keys"]],
    }
    checkpoint = cp.parse_text(parse_note(export["log"]["checkpoint"])[0])
    resigned = cp.sign_checkpoint(outsider, checkpoint.size, checkpoint.root, T0 + 60)
    forged = {**export, "keys": both, "log": {**export["log"], "checkpoint": resigned}}
    assert verdict(tmp_path, forged, capsys)[0] == 0  # the outsider's key in the file is trusted ...
    code, out = verdict(tmp_path, forged, capsys, "--pin", real)  # ... unless the real one is pinned
    assert code == 1 and "No known key of the log signed this checkpoint" in out
    alone = {**forged, "keys": outsider.public_document()}
    capsys.readouterr()
    path = tmp_path / "alone.json"
    path.write_text(json.dumps(alone))
    assert verify_main([str(path), "--pin", real]) == 2
    assert f"the pinned key {real} is not among the signing keys" in capsys.readouterr().err
