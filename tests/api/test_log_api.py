"""The public log of game heads over HTTP: checkpoint, consistency and inclusion proofs, cosignatures."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from starlette.testclient import TestClient

from services.cli.verify import PENDING_EXIT
from services.cli.verify import main as verify_main
from services.fairness.receipts import ensure_keys
from services.fairness.signing import raw_public
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency import leaves, merkle
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.history.export import build_export
from tests.services.fairness.transparency.support import (
    T0,
    WITNESS,
    WITNESS_KEY,
    finished_game,
    logged,
    publish,
    served_app,
    store_entries,
)


@pytest.fixture
def served() -> Iterator[tuple[TestClient, TransparencyLog]]:
    yield from served_app()


def test_before_any_checkpoint_the_log_answers_404_checkpoint_not_found(served) -> None:
    client, _ = served
    answer = client.get("/log/checkpoint")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "checkpoint_not_found"


def test_a_game_s_leaves_verify_against_the_served_checkpoint_and_later_ones_stay_consistent(served) -> None:
    client, tlog = served
    first = logged(tlog, 1)
    publish(tlog, T0)
    note = client.get("/log/checkpoint")
    assert note.status_code == 200 and note.headers["content-type"].startswith("text/plain")
    keys = tlog.store.run(ensure_keys(T0)).public_keys()
    old, _ = cp.open_checkpoint(note.text, keys)
    proofs = client.get(f"/games/{first}/log").json()
    assert proofs["size"] == old.size and proofs["pending"] == []
    for leaf in proofs["leaves"]:
        data = base64.b64decode(leaf["leaf"])
        assert leaves.decode(data).version == leaf["version"]
        path = [base64.b64decode(p) for p in leaf["proof"]]
        assert merkle.verify_inclusion(merkle.leaf_hash(data), leaf["index"], old.size, path, old.root)

    logged(tlog, 2)
    publish(tlog, T0 + 10)
    new, _ = cp.open_checkpoint(client.get("/log/checkpoint").text, keys)
    assert new.size > old.size
    answer = client.get(f"/log/consistency?from={old.size}&to={new.size}").json()
    proof = [base64.b64decode(p) for p in answer["proof"]]
    assert merkle.verify_consistency(old.size, new.size, proof, old.root, new.root)
    at_old = client.get(f"/games/{first}/log?size={old.size}").json()
    assert at_old["size"] == old.size and at_old["leaves"] == proofs["leaves"]


@pytest.mark.parametrize("query", ["from=5&to=2", "from=abc", "to=3", "from=0&to=999999"])
def test_a_consistency_proof_between_sizes_the_log_does_not_have_is_422(served, query: str) -> None:
    client, tlog = served
    logged(tlog, 1)
    answer = client.get(f"/log/consistency?{query}")
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "log_size_invalid"


def test_proofs_at_a_size_never_published_are_404(served) -> None:
    client, tlog = served
    game_id = logged(tlog, 1)
    publish(tlog, T0)
    answer = client.get(f"/games/{game_id}/log?size=1")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "checkpoint_not_found"


def test_a_configured_witness_s_cosignature_is_kept_and_served_on_the_checkpoint(served) -> None:
    client, tlog = served
    logged(tlog, 1)
    note = publish(tlog, T0)
    text = note.split("\n\n")[0] + "\n"
    line = cp.cosign(text, WITNESS_KEY.name, WITNESS, T0 + 3)
    answer = client.post("/log/cosignatures", json={"checkpoint": note, "cosignature": line})
    assert answer.status_code == 201 and answer.json()["cosignature"]["known"] is True
    assert client.get("/log/checkpoint").text == note + line + "\n"
    listed = client.get("/log/cosignatures").json()
    assert [c["witness"] for c in listed["cosignatures"]] == [WITNESS_KEY.name]


def test_an_unknown_witness_is_kept_apart_and_never_added_to_the_served_checkpoint(served) -> None:
    client, tlog = served
    note = publish(tlog, T0)
    text = note.split("\n\n")[0] + "\n"
    stranger = Ed25519PrivateKey.generate()
    key = cp.witness_key("someone.example", raw_public(stranger.public_key()))
    line = cp.cosign(text, key.name, stranger, T0)
    without = client.post("/log/cosignatures", json={"checkpoint": text, "cosignature": line})
    assert without.status_code == 422 and without.json()["error"]["code"] == "cosignature_invalid"
    answer = client.post(
        "/log/cosignatures", json={"checkpoint": text, "cosignature": line, "vkey": key.vkey}
    )
    assert answer.status_code == 201 and answer.json()["cosignature"]["known"] is False
    assert client.get("/log/checkpoint").text == note
    assert client.get("/log/cosignatures").json()["cosignatures"][0]["known"] is False


PROXY = "203.0.113.7"  # a trusted proxy: X-Forwarded-For names each client


@pytest.fixture
def behind_proxy() -> Iterator[tuple[TestClient, TransparencyLog]]:
    yield from served_app(peer=PROXY, trusted_proxies=PROXY)


def cosign_as_stranger(client: TestClient, text: str, name: str, address: str) -> tuple[int, str]:
    """A witness the service does not know cosigns ``text`` with a key it just made, from ``address``."""
    made_up = Ed25519PrivateKey.generate()
    key = cp.witness_key(name, raw_public(made_up.public_key()))
    body = {"checkpoint": text, "cosignature": cp.cosign(text, key.name, made_up, T0), "vkey": key.vkey}
    answer = client.post("/log/cosignatures", json=body, headers={"X-Forwarded-For": address})
    return answer.status_code, answer.json()["error"]["code"] if answer.status_code >= 400 else ""


def test_one_client_network_adds_one_unknown_witness_to_a_checkpoint_and_another_network_still_can(
    behind_proxy,
) -> None:
    client, tlog = behind_proxy
    note = publish(tlog, T0)
    text = note.split("\n\n")[0] + "\n"
    assert cosign_as_stranger(client, text, "first.example", "198.51.100.1") == (201, "")
    taken = cosign_as_stranger(client, text, "second.example", "198.51.100.2")  # the same /24
    assert taken == (409, "cosignature_from_network_taken")
    assert cosign_as_stranger(client, text, "third.example", "192.0.2.1") == (201, "")
    line = cp.cosign(text, WITNESS_KEY.name, WITNESS, T0 + 3)  # a configured witness is not limited so
    forwarded = {"X-Forwarded-For": "198.51.100.1"}
    known = client.post(
        "/log/cosignatures", json={"checkpoint": note, "cosignature": line}, headers=forwarded
    )
    assert known.status_code == 201
    listed = client.get("/log/cosignatures").json()["cosignatures"]
    assert [c["witness"] for c in listed] == [WITNESS_KEY.name, "first.example", "third.example"]
    assert "198.51" not in json.dumps(listed)  # the networks are never shown


@pytest.mark.parametrize(
    "change,status,code",
    [
        (lambda text, line: {"checkpoint": "nonsense", "cosignature": line}, 422, "checkpoint_malformed"),
        (lambda text, line: {"checkpoint": text, "cosignature": "— w x"}, 422, "cosignature_malformed"),
        (
            lambda text, line: {"checkpoint": text.replace("\n0\n", "\n7\n"), "cosignature": line},
            409,
            "checkpoint_unknown",
        ),
        (
            lambda text, line: {"checkpoint": text, "cosignature": line, "vkey": "w+00+AA=="},
            422,
            "cosignature_invalid",
        ),
        (lambda text, line: {"checkpoint": text}, 422, "invalid_request"),
    ],
)
def test_a_bad_cosignature_post_is_refused_with_its_reason_and_stores_nothing(
    served, change, status, code
) -> None:
    client, tlog = served
    note = publish(tlog, T0)
    text = note.split("\n\n")[0] + "\n"
    line = cp.cosign(text.replace("timestamp", "timestamp 9"), WITNESS_KEY.name, WITNESS, T0)
    answer = client.post("/log/cosignatures", json=change(text, line))
    assert answer.status_code == status and answer.json()["error"]["code"] == code
    assert client.get("/log/cosignatures").json()["cosignatures"] == []


def test_the_openapi_document_describes_the_log_routes(served) -> None:
    client, _ = served
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/log/checkpoint", "/log/consistency", "/log/cosignatures", "/games/{game_id}/log"):
        assert path in paths
    assert "post" in paths["/log/cosignatures"]


def test_an_export_carries_the_game_s_proofs_and_the_checkpoint_once_the_log_has_one(served) -> None:
    client, tlog = served
    game_id = logged(tlog, 4)
    assert "log" not in client.get(f"/games/{game_id}/export").json()  # no checkpoint yet: no section
    publish(tlog, T0)
    export = client.get(f"/games/{game_id}/export").json()
    assert export["log"]["checkpoint"] == client.get("/log/checkpoint").text
    assert export["log"]["leaves"][-1]["version"] == export["head"]["version"]
    assert "next_checkpoint" not in export["log"]  # every head proven: nothing to wait for
    served_log = client.get(f"/games/{game_id}/log").json()
    assert export["log"] == {key: value for key, value in served_log.items() if key != "next_checkpoint"}


def test_an_export_made_before_the_log_holds_the_final_head_is_pending_until_the_next_checkpoint(
    served, tmp_path, capsys
) -> None:
    """Right after a game's last move its heads are not in a signed checkpoint yet: the export says
    when the next one is due (the settings' 10 s between checkpoints, 1 s between appends, at most),
    ``tablestream verify`` calls it pending in words, and the export made after it verifies."""
    client, tlog = served
    publish(tlog, T0)
    game_id, g = finished_game(5)
    store_entries(tlog.redis, game_id, g.entries)  # played to its end; the appender has not run yet
    asked = time.time()
    export = client.get(f"/games/{game_id}/export").json()
    due = export["log"]["next_checkpoint"]
    assert export["log"]["leaves"] == [] and export["log"]["pending"] == []
    assert asked + 10 <= due <= time.time() + 13
    assert asked + 10 <= client.get(f"/games/{game_id}/log").json()["next_checkpoint"] <= time.time() + 13
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert verify_main([str(path)]) == PENDING_EXIT
    when = datetime.fromtimestamp(due, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert (
        f"the public log has not yet published this head; export again after {when}"
        in capsys.readouterr().out
    )

    note_loggable(tlog.redis, game_id, g.entries[-1].version)
    tlog.append_pending()
    publish(tlog, T0 + 10)
    path.write_text(client.get(f"/games/{game_id}/export").text)
    assert verify_main([str(path)]) == 0, capsys.readouterr().out


def test_cosignatures_past_a_client_s_rate_are_429_before_the_body_is_read() -> None:
    for client, tlog in served_app(cosignature_rate="2/minute"):
        note = publish(tlog, T0)
        text = note.split("\n\n")[0] + "\n"
        line = cp.cosign(text, WITNESS_KEY.name, WITNESS, T0)
        answers = [
            client.post("/log/cosignatures", json={"checkpoint": text, "cosignature": line}) for _ in range(3)
        ]
        assert [a.status_code for a in answers] == [201, 201, 429]
        assert answers[-1].json()["error"]["code"] == "rate_limited" and "Retry-After" in answers[-1].headers


@pytest.mark.parametrize("size", [str(2**63), "1727631241023449464832", "-1"])
def test_a_tree_size_past_the_documented_maximum_is_422_with_the_range_in_words(served, size: str) -> None:
    client, tlog = served
    game_id = logged(tlog, 1)
    for path in (f"/games/{game_id}/log?size={size}", f"/log/cosignatures?size={size}"):
        answer = client.get(path)
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "log_size_invalid"
        assert f"0 to {2**63 - 1}" in answer.json()["error"]["message"]


def test_the_served_witness_list_is_what_tablestream_verify_counts_a_quorum_of(
    served, tmp_path, capsys
) -> None:
    client, tlog = served
    game_id = logged(tlog, 1)
    note = publish(tlog, T0)
    text = note.split("\n\n")[0] + "\n"
    line = cp.cosign(text, WITNESS_KEY.name, WITNESS, T0 + 3)
    assert client.post("/log/cosignatures", json={"checkpoint": note, "cosignature": line}).status_code == 201
    listed = client.get("/log/witnesses")
    assert listed.status_code == 200
    assert listed.json() == {"witnesses": [{"name": WITNESS_KEY.name, "vkey": WITNESS_KEY.vkey}]}
    witnesses = tmp_path / "witnesses.json"
    witnesses.write_text(listed.text)
    entries = tlog.store.read(game_id)
    export = build_export(
        entries, tlog.store.run(ensure_keys(T0)).public_document(), tlog.proofs_for_game(game_id)
    )
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert verify_main([str(path), "--witnesses", str(witnesses), "--require", "witnesses"]) == 0
    assert "PASSED       witnesses: The log's checkpoint is cosigned by 1 of the 1 witnesses given" in (
        capsys.readouterr().out
    )
    vkeys = tmp_path / "witnesses.txt"
    other = cp.witness_key("other.example", raw_public(Ed25519PrivateKey.generate().public_key()))
    vkeys.write_text(f"# the witnesses I trust\n{WITNESS_KEY.vkey}\n{other.vkey}\n")
    assert verify_main([str(path), "--witnesses", str(vkeys), "--quorum", "2"]) == PENDING_EXIT
    assert "cosigned by only 1 of the 2 witnesses given" in capsys.readouterr().out
