"""Signing keys, signed receipts and C2SP signed notes (services.fairness.signing)."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from services.fairness.signing import (
    KeyRing,
    NoteError,
    PublicKey,
    ReceiptCheck,
    SigningKey,
    add_note_signature,
    key_hash,
    open_note,
    parse_note,
    parse_signer_key,
    parse_vkey,
    public_keys_from_document,
    raw_public,
    receipt_message,
    sign_note,
    sign_receipt,
    signer_key,
    verify_receipt,
    vkey,
)

# golang.org/x/mod/sumdb/note, note_test.go and its package documentation
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
PETER_TEXT = (
    "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
)
PETER_SIGNATURE = (
    "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM="
)
PETER_NOTE = f"{PETER_TEXT}\n— PeterNeumann {PETER_SIGNATURE}\n"

GAME = "g-abc"
HASH = "ab" * 32
T0 = 1_800_000_000


def receipt(version: int = 7, hash_: str = HASH) -> dict:
    return {"game_id": GAME, "version": version, "hash": hash_}


# -- signed notes: the Go reference vectors -------------------------------------------------------------


def test_signing_the_go_reference_text_gives_the_published_note_byte_for_byte() -> None:
    name, private = parse_signer_key(PETER_SKEY)
    assert name == "PeterNeumann"
    assert sign_note(PETER_TEXT, name, private) == PETER_NOTE
    assert vkey(name, raw_public(private.public_key())) == PETER_VKEY
    assert signer_key(name, private) == PETER_SKEY


def test_the_go_reference_note_opens_with_its_verifier_key() -> None:
    assert open_note(PETER_NOTE, [PETER_VKEY]) == (PETER_TEXT, ["PeterNeumann"])


def test_a_note_signed_only_by_an_unknown_key_is_refused() -> None:
    with pytest.raises(NoteError, match="no known key"):
        open_note(PETER_NOTE, [ENOCH_VKEY])


def test_a_changed_note_text_fails_the_known_keys_signature() -> None:
    with pytest.raises(NoteError, match="does not verify"):
        open_note(PETER_NOTE.replace("cryptography", "cryptographY"), [PETER_VKEY])


def test_a_signature_by_a_key_sharing_only_the_name_is_ignored_not_failed() -> None:
    impostor = Ed25519PrivateKey.generate()
    note = add_note_signature(PETER_NOTE, "PeterNeumann", impostor)
    assert open_note(note, [PETER_VKEY]) == (PETER_TEXT, ["PeterNeumann"])


def test_a_verifier_key_whose_hash_does_not_match_is_refused() -> None:
    parse_vkey(PETER_VKEY)
    with pytest.raises(NoteError):
        parse_vkey(PETER_VKEY.replace("c74f20a3", "c74f20a4"))
    with pytest.raises(NoteError):
        parse_vkey("Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
    with pytest.raises(NoteError):
        parse_vkey(PETER_VKEY[:-4])


def test_every_truncation_of_the_verifier_key_is_refused() -> None:
    for end in range(len(PETER_VKEY)):
        with pytest.raises(NoteError):
            parse_vkey(PETER_VKEY[:end])


def test_malformed_notes_are_refused_with_a_note_error() -> None:
    for bad in (PETER_TEXT, PETER_NOTE.rstrip("\n"), PETER_NOTE.replace("— ", "- "), PETER_NOTE + "\x07"):
        with pytest.raises(NoteError):
            open_note(bad, [PETER_VKEY])


def test_a_note_text_without_its_final_newline_cannot_be_signed() -> None:
    with pytest.raises(NoteError):
        sign_note("no newline", "a.example", Ed25519PrivateKey.generate())


def test_parse_note_hands_back_each_signature_for_other_signature_types() -> None:
    text, signatures = parse_note(PETER_NOTE)
    assert text == PETER_TEXT
    assert [(s.name, f"{s.key_hash:08x}", len(s.signature)) for s in signatures] == [
        ("PeterNeumann", "c74f20a3", 64)
    ]


@given(
    text=st.text(st.characters(min_codepoint=32, exclude_categories=["Cs"]), max_size=60).map(
        lambda t: t.replace("\n", "") + "\n"
    ),
    names=st.lists(st.from_regex(r"[a-z0-9./_-]{1,20}", fullmatch=True), min_size=1, max_size=4, unique=True),
)
def test_a_note_signed_by_several_keys_opens_with_any_subset_of_them(text: str, names: list[str]) -> None:
    keys = {name: Ed25519PrivateKey.generate() for name in names}
    note = sign_note(text, names[0], keys[names[0]])
    for name in names[1:]:
        note = add_note_signature(note, name, keys[name])
    for name, key in keys.items():
        assert open_note(note, [vkey(name, raw_public(key.public_key()))]) == (text, [name])
    all_keys = [vkey(name, raw_public(key.public_key())) for name, key in keys.items()]
    assert open_note(note, all_keys) == (text, names)


def test_the_key_hash_covers_the_signature_type() -> None:
    public = raw_public(Ed25519PrivateKey.generate().public_key())
    assert key_hash("a.example", public, 0x01) != key_hash("a.example", public, 0x04)


# -- receipts -------------------------------------------------------------------------------------------


def test_the_receipt_message_is_the_documented_domain_separated_text() -> None:
    assert receipt_message("0123456789abcdef", GAME, 7, HASH, T0) == (
        f"tablestream-receipt-v1\n0123456789abcdef\n{GAME}\n7\n{HASH}\n{T0}\n".encode()
    )


def test_a_signed_receipt_keeps_its_fields_and_verifies_with_the_public_keys() -> None:
    ring = KeyRing.generate(T0)
    signed = sign_receipt(receipt(), ring.current, T0 + 5)
    assert {k: signed[k] for k in ("game_id", "version", "hash")} == receipt()
    assert signed["key_id"] == ring.current.key_id and signed["signed_at"] == T0 + 5
    assert len(base64.b64decode(signed["signature"])) == 64
    assert verify_receipt(signed, ring.public_keys()) is ReceiptCheck.OK


@pytest.mark.parametrize(
    "field, value",
    [("version", 8), ("hash", "cd" * 32), ("game_id", "g-other"), ("signed_at", T0 + 6)],
)
def test_a_receipt_with_any_signed_field_changed_is_a_bad_signature(field: str, value: object) -> None:
    ring = KeyRing.generate(T0)
    forged = {**sign_receipt(receipt(), ring.current, T0 + 5), field: value}
    assert verify_receipt(forged, ring.public_keys()) is ReceiptCheck.BAD_SIGNATURE


def test_a_receipt_signed_by_a_key_the_service_never_published_is_unknown() -> None:
    ring, other = KeyRing.generate(T0), KeyRing.generate(T0)
    signed = sign_receipt(receipt(), other.current, T0 + 5)
    assert verify_receipt(signed, ring.public_keys()) is ReceiptCheck.UNKNOWN_KEY


def test_a_forger_claiming_the_services_key_id_with_their_own_key_is_a_bad_signature() -> None:
    ring = KeyRing.generate(T0)
    forger = SigningKey.generate(T0)
    message = receipt_message(ring.current.key_id, GAME, 7, HASH, T0 + 5)
    forged = {
        **receipt(),
        "key_id": ring.current.key_id,
        "signed_at": T0 + 5,
        "signature": base64.b64encode(forger.sign(message)).decode(),
    }
    assert verify_receipt(forged, ring.public_keys()) is ReceiptCheck.BAD_SIGNATURE


def test_a_receipt_signed_outside_its_keys_period_is_not_valid() -> None:
    ring = KeyRing.generate(T0).rotate(T0 + 100, overlap=0)
    old = ring.keys[0]
    assert (
        verify_receipt(sign_receipt(receipt(), old, T0 + 100), ring.public_keys())
        is ReceiptCheck.KEY_NOT_VALID
    )
    assert (
        verify_receipt(sign_receipt(receipt(), old, T0 - 1), ring.public_keys()) is ReceiptCheck.KEY_NOT_VALID
    )


@pytest.mark.parametrize(
    "change",
    [
        {"version": "7"},
        {"version": -1},
        {"hash": "AB" * 32},
        {"signature": "not base64!"},
        {"signature": base64.b64encode(b"short").decode()},
        {"key_id": "xyz"},
        {"game_id": "a\nb"},
        {"signed_at": None},
    ],
)
def test_a_receipt_of_the_wrong_shape_is_malformed(change: dict) -> None:
    ring = KeyRing.generate(T0)
    bad = {**sign_receipt(receipt(), ring.current, T0 + 5), **change}
    assert verify_receipt(bad, ring.public_keys()) is ReceiptCheck.MALFORMED
    assert verify_receipt({"game_id": GAME}, ring.public_keys()) is ReceiptCheck.MALFORMED


# -- the key ring -----------------------------------------------------------------------------------------


def test_after_rotation_old_receipts_still_verify_and_the_new_key_signs() -> None:
    ring = KeyRing.generate(T0)
    before = sign_receipt(receipt(), ring.current, T0 + 10)
    rotated = ring.rotate(T0 + 1000, overlap=60)
    assert rotated.keys[0].public.not_after == T0 + 1060
    assert rotated.current.public.not_before == T0 + 1000 and rotated.current.public.not_after is None
    after = sign_receipt(receipt(8), rotated.current, T0 + 1001)
    assert after["key_id"] != before["key_id"]
    for signed in (before, after):
        assert verify_receipt(signed, rotated.public_keys()) is ReceiptCheck.OK


def test_the_secret_form_round_trips_and_the_public_document_holds_no_private_key() -> None:
    ring = KeyRing.generate(T0, name="tables.example").rotate(T0 + 50)
    again = KeyRing.from_secret(ring.to_secret())
    assert again.public_keys() == ring.public_keys()
    signed = sign_receipt(receipt(), again.current, T0 + 60)
    doc = ring.public_document()
    assert "private" not in repr(doc)
    assert doc["current"] == ring.current.key_id
    assert public_keys_from_document(doc) == ring.public_keys()
    assert verify_receipt(signed, public_keys_from_document(doc)) is ReceiptCheck.OK
    assert parse_vkey(doc["keys"][1]["vkey"]).name == "tables.example"


def test_a_key_document_whose_id_is_not_its_keys_is_refused() -> None:
    doc = KeyRing.generate(T0).public_document()["keys"][0]
    with pytest.raises(ValueError, match="does not belong"):
        PublicKey.from_document({**doc, "key_id": "0" * 16})
    with pytest.raises(ValueError):
        PublicKey.from_document({**doc, "public_key": base64.b64encode(b"x" * 31).decode()})
    with pytest.raises(ValueError):
        public_keys_from_document({"keys": "nope"})


def test_a_secret_whose_private_key_does_not_match_its_public_key_is_refused() -> None:
    import json

    one, two = KeyRing.generate(T0), KeyRing.generate(T0)
    mixed = json.loads(one.to_secret())
    mixed[0]["private_key"] = json.loads(two.to_secret())[0]["private_key"]
    with pytest.raises(ValueError, match="does not match"):
        KeyRing.from_secret(json.dumps(mixed))


def test_the_ring_note_key_signs_notes_its_vkey_opens() -> None:
    ring = KeyRing.generate(T0, name="tables.example")
    note = sign_note("tables.example\n1\nAAAA\n", "tables.example", ring.current.private)
    assert open_note(note, [ring.current.public.document()["vkey"]]) == (
        "tables.example\n1\nAAAA\n",
        ["tables.example"],
    )


def test_merging_a_restored_ring_keeps_every_key_and_closes_all_but_the_newest() -> None:
    restored = KeyRing.generate(T0).rotate(T0 + 100, overlap=10)
    fresh = KeyRing.generate(T0 + 500)
    merged = fresh.merged(restored, now=T0 + 600)
    assert [k.key_id for k in merged.keys] == [*(k.key_id for k in restored.keys), fresh.current.key_id]
    assert [k.public.not_after for k in merged.keys] == [T0 + 110, T0 + 600, None]
    old = sign_receipt(receipt(), restored.keys[0], T0 + 50)
    assert verify_receipt(old, merged.public_keys()) is ReceiptCheck.OK
    assert fresh.merged(fresh, now=T0 + 600).public_keys() == fresh.public_keys()
