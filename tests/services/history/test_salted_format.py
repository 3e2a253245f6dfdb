"""Stored format 2: a 128-bit salt in every entry's hashed bytes; format 1 streams still verify."""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest

from domain.games import game_names
from services.history.export import build_export
from services.history.records import GENESIS_HASH, CommandRecord, Entry, encode_batch, is_salt
from services.history.verify import verify_export
from services.table.commands import fresh_salts
from tests.conftest import Noted
from tests.support.play import play_random
from tests.support.recorded import new_recorded_game, recorded_random_game, rewrite

GAMES = game_names()


def export_of(entries: list[Entry]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(build_export(entries)))
    return doc


def rows(entries: list[Entry]) -> list[dict[str, Any]]:
    return [json.loads(entry.data) for entry in entries]


@pytest.mark.parametrize("game", GAMES)
def test_every_entry_of_a_new_stream_carries_its_own_128_bit_salt(game: str) -> None:
    entries = recorded_random_game(game, 3, seed=2).entries
    salts = [row["salt"] for row in rows(entries)]
    assert all(is_salt(salt) for salt in salts)
    assert len(set(salts)) == len(salts)


@pytest.mark.parametrize("game", GAMES)
def test_a_format_1_stream_without_salts_still_verifies_clean(game: str) -> None:
    unsalted = new_recorded_game(game, 3, seed=2, salted=False)
    play_random(unsalted, random.Random(2))
    assert all("salt" not in row for row in rows(unsalted.entries))
    assert verify_export(export_of(unsalted.entries)).ok


def test_format_1_bytes_are_exactly_those_written_before_salts_existed() -> None:
    record = CommandRecord(id="c1", kind="command", seat=0, body={"type": "pass"})
    (entry,) = encode_batch(2, GENESIS_HASH, record, [Noted(n=1)], [None])
    assert entry.data == (
        b'{"version":2,"command_id":"c1","event":{"type":"noted","n":1},'
        b'"command":{"id":"c1","kind":"command","seat":0,"body":{"type":"pass"}}}'
    )


def test_changing_one_character_of_a_salt_breaks_the_hash_chain_at_its_version() -> None:
    entries = recorded_random_game("skull", 3, seed=2).entries
    doc = export_of(entries)
    target = doc["entries"][5]
    row = json.loads(target["data"])
    row["salt"] = ("0" if row["salt"][0] != "0" else "1") + row["salt"][1:]
    target["data"] = json.dumps(row, separators=(",", ":"))
    report = verify_export(doc)
    assert any(
        f.endswith("broken at version 6: its hash is not SHA-256(previous hash || data)")
        for f in report.failures()
    )


def test_an_entry_stripped_of_its_salt_in_a_salted_stream_is_named_even_when_rehashed() -> None:
    entries = recorded_random_game("six-nimmt", 3, seed=2).entries

    def strip(decoded: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        stored, event = decoded[9]
        decoded[9] = (msgspec.structs.replace(stored, salt=None), event)
        return decoded

    report = verify_export(export_of(rewrite(entries, strip)))
    assert any(
        "version 10: it has no salt, though the stream is salted since version 1" in f
        for f in report.failures()
    )


def test_a_salt_that_is_not_128_bits_of_hex_is_named_even_when_rehashed() -> None:
    entries = recorded_random_game("skull-king", 3, seed=2).entries

    def shorten(decoded: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        stored, event = decoded[3]
        decoded[3] = (msgspec.structs.replace(stored, salt="abc"), event)
        return decoded

    report = verify_export(export_of(rewrite(entries, shorten)))
    assert any("version 4: its salt is not 128 bits of lowercase hex" in f for f in report.failures())


def test_encoding_refuses_a_malformed_salt_or_a_missing_one() -> None:
    record = CommandRecord(id="c1", kind="command", seat=0, body={})
    with pytest.raises(ValueError, match="salt"):
        encode_batch(1, GENESIS_HASH, record, [Noted(n=1)], ["XYZ"])
    with pytest.raises(ValueError, match="salts"):
        encode_batch(1, GENESIS_HASH, record, [Noted(n=1), Noted(n=2)], fresh_salts(1))


def test_the_write_side_draws_a_fresh_salt_per_entry() -> None:
    salts = fresh_salts(64)
    assert all(is_salt(salt) for salt in salts)
    assert len(set(salts)) == 64
