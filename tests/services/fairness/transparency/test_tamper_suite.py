"""The tamper suite: one honest export of a finished game (its heads and chat in the public log, its
players' signed receipts, the service's keys kept apart) and the bundle of a dispute on its second
round, then each way an operator or a player handing files around could change them, every one
consistent where it can be made so (hash chains recomputed). ``tablestream verify --require
log,receipts,chat,keys`` must call none of the 27 VERIFIED, and the honest two VERIFIED.
"""

from __future__ import annotations

import base64
import copy
import json
import random
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import fakeredis
import msgspec
import pytest

from services.cli.verify import main as verify_main
from services.fairness.signing import KeyRing, parse_note, sign_receipt
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.history.chat_export import GENESIS, chat_section
from services.history.export import build_export
from services.history.records import Entry
from services.history.verify import parse_entries
from services.store import chat
from services.store.event_store import SyncEventStore
from tests.services.fairness.transparency.support import batch_ends, store_entries
from tests.support.play import play_random
from tests.support.recorded import new_recorded_game, rewrite

T0 = 1_800_000_000
GAME_ID = "g-tampered"
REQUIRED = ("--require", "log,receipts,chat,keys")
Doc = dict[str, Any]


@cache
def honest() -> tuple[str, str, str]:
    """The honest export (with its chat), and the keys and receipts a player keeps apart from it, as
    JSON texts (made once: the tests only read them)."""
    ring = KeyRing.generate(T0, "tables.example")
    tlog = TransparencyLog(SyncEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer())))
    g = new_recorded_game("skull", 3, seed=0, game_id=GAME_ID)
    play_random(g, random.Random(5))
    for step, cut in enumerate(batch_ends(g.entries)):
        store_entries(tlog.redis, GAME_ID, g.entries[:cut])
        if step % 4 == 1:
            said = {"seat": 0, "text": f"gg {step}"}
            tlog.store.run(chat.append(GAME_ID, "message", said, T0 * 1000, cap=200))
    note_loggable(tlog.redis, GAME_ID, g.entries[-1].version)
    tlog.append_pending()
    tlog.publish(ring, T0 + 60)
    export = build_export(g.entries, ring.public_document(), tlog.proofs_for_game(GAME_ID))
    export["chat"] = chat_section(tlog.store.run(chat.stored_bytes(GAME_ID)))
    receipts = [
        sign_receipt({"game_id": GAME_ID, "version": v, "hash": h}, ring.current, T0 + 10 + i)
        for i, (v, h) in enumerate(g.receipts)
    ]
    return json.dumps(export), json.dumps(ring.public_document()), json.dumps(receipts)


def verdict(
    doc: Doc, tmp_path: Path, capsys: pytest.CaptureFixture[str], receipts: bool = True
) -> tuple[int, str]:
    """``tablestream verify`` of ``doc`` with the keys kept apart (and the player's receipts, for an
    export: a bundle carries its own), every ground required."""
    _, keys, kept = honest()
    paths = {name: tmp_path / f"{name}.json" for name in ("doc", "keys", "receipts")}
    paths["doc"].write_text(json.dumps(doc))
    paths["keys"].write_text(keys)
    paths["receipts"].write_text(kept)
    args = [str(paths["doc"]), "--keys", str(paths["keys"])]
    args += ["--receipts", str(paths["receipts"])] if receipts else []
    code = verify_main([*args, *REQUIRED])
    return code, capsys.readouterr().out


def with_entries(doc: Doc, entries: list[Entry]) -> Doc:
    changed = copy.deepcopy(doc)
    changed["entries"] = [{"version": e.version, "hash": e.hash, "data": e.data.decode()} for e in entries]
    changed["head"] = {"version": entries[-1].version, "hash": entries[-1].hash}
    return changed


def rewritten(change: Callable[[list[Any]], list[Any]]) -> Callable[[Doc], Doc]:
    """A tamper that rewrites the stored history consistently (every hash recomputed)."""
    return lambda doc: with_entries(doc, rewrite(parse_entries(doc), change))


def _first_of(kind: str) -> Callable[[list[Any]], int]:
    return lambda rows: next(i for i, (_, event) in enumerate(rows) if event["type"] == kind)


def changed_disc(rows: list[Any]) -> list[Any]:
    """A placed disc turned into the other kind."""
    at = _first_of("disc_placed")(rows)
    event = dict(rows[at][1])
    if "disc" in event:
        event["disc"] = "skull" if event["disc"] == "flower" else "flower"
    rows[at] = (rows[at][0], event)
    return rows


def dropped_command(rows: list[Any]) -> list[Any]:
    commands = [i for i, (stored, _) in enumerate(rows) if stored.command is not None]
    return rows[: commands[3]] + rows[commands[4] :]


def swapped_commands(rows: list[Any]) -> list[Any]:
    commands = [i for i, (stored, _) in enumerate(rows) if stored.command is not None]
    a, b, c = commands[3], commands[4], commands[5]
    return rows[:a] + rows[b:c] + rows[a:b] + rows[c:]


def resalted_last(rows: list[Any]) -> list[Any]:
    stored, event = rows[-1]
    rows[-1] = (msgspec.structs.replace(stored, salt="0" * 32), event)
    return rows


def truncated(rows: list[Any]) -> list[Any]:
    return rows[:-1]


def section(doc: Doc, **changes: Any) -> Doc:
    changed = copy.deepcopy(doc)
    changed["log"].update(changes)
    return changed


def without(doc: Doc, *keys: str) -> Doc:
    changed = copy.deepcopy(doc)
    for key in keys:
        changed.pop(key, None)
    return changed


def zeroed_proof(doc: Doc) -> Doc:
    changed = copy.deepcopy(doc)
    leaf = changed["log"]["leaves"][-1]
    leaf["proof"] = [base64.b64encode(bytes(32)).decode() for _ in leaf["proof"]]
    return changed


def forged_signature(doc: Doc) -> Doc:
    changed = copy.deepcopy(doc)
    text, _, signatures = changed["log"]["checkpoint"].partition("\n\n")
    name, blob = signatures.strip().split(" ")[1:3]
    raw = bytearray(base64.b64decode(blob))
    raw[-1] ^= 1
    changed["log"]["checkpoint"] = f"{text}\n\n— {name} {base64.b64encode(bytes(raw)).decode()}\n"
    return changed


def rekeyed(doc: Doc) -> Doc:
    """The keys inside the file replaced by an outsider's, the checkpoint signed again with it."""

    outsider = KeyRing.generate(T0, "tables.example")
    changed = copy.deepcopy(doc)
    checkpoint = cp.parse_text(parse_note(doc["log"]["checkpoint"])[0])
    changed["keys"] = outsider.public_document()
    changed["log"]["checkpoint"] = cp.sign_checkpoint(outsider, checkpoint.size, checkpoint.root, T0 + 60)
    return changed


def chat_records(change: Callable[[list[Any]], list[Any]]) -> Callable[[Doc], Doc]:
    """A tamper of the chat, chained again from the start so that its own chain verifies."""

    def tamper(doc: Doc) -> Doc:
        changed = copy.deepcopy(doc)
        kept = change([json.loads(item["data"]) for item in doc["chat"]["records"]])
        records, previous = [], GENESIS
        for number, record in enumerate(kept, start=1):
            data = chat.canonical({**record, "n": number})
            previous = chat.chain(previous, data)
            records.append({"n": number, "hash": previous, "data": data.decode()})
        changed["chat"] = {**doc["chat"], "records": records, "head": {"n": len(records), "hash": previous}}
        return changed

    return tamper


def altered_chat_text(records: list[Any]) -> list[Any]:
    records[0] = {**records[0], "text": "I never said that"}
    return records


TAMPERS: dict[str, Callable[[Doc], Doc]] = {
    "a placed disc changed, the chain recomputed": rewritten(changed_disc),
    "a command dropped, the chain recomputed": rewritten(dropped_command),
    "two commands swapped, the chain recomputed": rewritten(swapped_commands),
    "the last entry salted again, the chain recomputed": rewritten(resalted_last),
    "the last entry cut off": rewritten(truncated),
    "an entry's data changed, its hash not": lambda doc: _edited_entry(doc),
    "the head claims another hash": lambda doc: {
        **copy.deepcopy(doc),
        "head": {**doc["head"], "hash": "ab" * 32},
    },
    "the log section removed": lambda doc: without(doc, "log"),
    "the log's leaves removed": lambda doc: section(doc, leaves=[]),
    "the final head's leaf removed": lambda doc: section(doc, leaves=doc["log"]["leaves"][:-1]),
    "an inclusion proof zeroed": zeroed_proof,
    "the checkpoint's signature altered": forged_signature,
    "the keys and the checkpoint replaced by an outsider's": rekeyed,
    "a chat message's text changed, the chat chained again": chat_records(altered_chat_text),
    "a chat message removed, the chat chained again": chat_records(lambda records: records[1:]),
    "the last chat message cut off": chat_records(lambda records: records[:-1]),
    "the chat removed": lambda doc: without(doc, "chat"),
    "the chat's leaves stripped from the log section": lambda doc: _stripped_chat(doc),
    "a chat record's hash changed": lambda doc: _chat_hash_changed(doc),
}


def _edited_entry(doc: Doc) -> Doc:
    changed = copy.deepcopy(doc)
    entry = changed["entries"][5]
    entry["data"] = entry["data"].replace('"seat":0', '"seat":1', 1).replace('"seat":1', '"seat":2', 1)
    if entry["data"] == doc["entries"][5]["data"]:
        entry["data"] = entry["data"][:-1] + " }"
    return changed


def _stripped_chat(doc: Doc) -> Doc:
    changed = copy.deepcopy(doc)
    changed["log"].pop("chat", None)
    changed["log"].pop("chat_pending", None)
    return changed


def _chat_hash_changed(doc: Doc) -> Doc:
    changed = copy.deepcopy(doc)
    changed["chat"]["records"][0]["hash"] = "cd" * 32
    return changed


def test_the_honest_export_is_verified_on_every_ground_required(tmp_path, capsys) -> None:
    doc = json.loads(honest()[0])
    assert len(doc["chat"]["records"]) >= 3 and doc["log"]["chat"]
    code, out = verdict(doc, tmp_path, capsys)
    assert code == 0, out
    assert any(line.startswith("VERIFIED") for line in out.splitlines())


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_no_tampered_export_is_called_verified(name, tmp_path, capsys) -> None:
    doc = json.loads(honest()[0])
    tampered = TAMPERS[name](doc)
    assert tampered != doc
    code, out = verdict(tampered, tmp_path, capsys)
    assert code in (1, 2), (name, code, out)
    assert not any(line.startswith("VERIFIED") for line in out.splitlines()), (name, out)


# -- dispute bundles -------------------------------------------------------------------------------


@cache
def honest_bundle() -> str:
    """The bundle of a dispute on round 2 by seat 1 of the same game, as the service builds it."""
    from services.disputes.bundle import build_bundle

    export = json.loads(honest()[0])
    entries = parse_entries(export)
    receipts = json.loads(honest()[2])
    extra = {"keys": export["keys"], "log": export["log"]}
    return json.dumps(build_bundle(entries, {"round": 2, "seat": 1}, receipts, extra))


def in_bundle(change: Callable[[Doc], Doc]) -> Callable[[Doc], Doc]:
    """A tamper of the bundle's export, kept a bundle."""
    return lambda bundle: {**bundle, "export": change(bundle["export"])}


def changed_view(bundle: Doc) -> Doc:
    changed = copy.deepcopy(bundle)
    view = changed["views"][-1]
    view["view"]["version"] = view["view"].get("version", 0) + 1 if isinstance(view.get("view"), dict) else 0
    changed["views"][-1] = {**view, "version": view["version"]}
    if changed == bundle:
        changed["views"] = changed["views"][:-1]
    return changed


BUNDLE_TAMPERS: dict[str, Callable[[Doc], Doc]] = {
    "the bundle's history: a placed disc changed, the chain recomputed": in_bundle(rewritten(changed_disc)),
    "the bundle's history: a command dropped, the chain recomputed": in_bundle(rewritten(dropped_command)),
    "the bundle's history: the last entry salted again": in_bundle(rewritten(resalted_last)),
    "the bundle's log section removed": lambda bundle: without(bundle, "log"),
    "the bundle's receipts removed": lambda bundle: {**bundle, "receipts": []},
    "the bundle's keys and checkpoint replaced by an outsider's": lambda bundle: {
        **rekeyed(bundle),
        "export": {**bundle["export"], "keys": rekeyed(bundle)["keys"]},
    },
    "the seat's views: one changed": changed_view,
    "the disputed seat changed": lambda bundle: {**bundle, "seat": (bundle["seat"] + 1) % 3},
}


def test_the_honest_bundle_is_verified_on_every_ground_required(tmp_path, capsys) -> None:
    code, out = verdict(json.loads(honest_bundle()), tmp_path, capsys, receipts=False)
    assert code == 0, out


@pytest.mark.parametrize("name", sorted(BUNDLE_TAMPERS))
def test_no_tampered_bundle_is_called_verified(name, tmp_path, capsys) -> None:
    bundle = json.loads(honest_bundle())
    tampered = BUNDLE_TAMPERS[name](bundle)
    assert tampered != bundle
    code, out = verdict(tampered, tmp_path, capsys, receipts=False)
    assert code in (1, 2), (name, code, out)
    assert not any(line.startswith("VERIFIED") for line in out.splitlines()), (name, out)
