"""``tablestream witness URL [--state DIR] [--name NAME] [--interval SECONDS] [--once] [--serve
HOST:PORT]``: a witness of a Tablestream service's public log of game heads (docs/fairness.md
"Transparency log").

Anyone can run one. Each poll it fetches the latest checkpoint (``GET URL/log/checkpoint``) and the
service's keys (``GET URL/.well-known/tablestream-keys``), checks the checkpoint's signature, then
its consistency with the last checkpoint it kept (``GET URL/log/consistency``: an RFC 9162 proof
that the new tree extends the old one). If it is consistent it keeps it, cosigns it (C2SP
tlog-cosignature, with the witness's own Ed25519 key) and sends the cosignature
(``POST URL/log/cosignatures``). If it is not, it refuses: it says so, keeps the old checkpoint and
the evidence (both notes and the proof) in its state directory, and exits with code 4.

State (a directory, default: the platform's user state directory for ``tablestream-witness``):
``key`` (its signer key, made on first run; 0600), ``checkpoint`` (the last consistent checkpoint),
``forks/`` (evidence of each refusal), served to anyone with ``--serve`` (``Evidence``). Exit codes:
0 stopped (``--once``: polled fine), 2 the service cannot be reached or answers nonsense, 3 a
checkpoint with a bad signature, 4 a fork.
"""

from __future__ import annotations

import argparse
import base64
import http.server
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import platformdirs
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from services.fairness.signing import (
    PublicKey,
    parse_signer_key,
    public_keys_from_document,
    raw_public,
    signer_key,
)
from services.fairness.transparency import merkle
from services.fairness.transparency.checkpoint import (
    Checkpoint,
    CheckpointError,
    cosign,
    open_checkpoint,
    witness_key,
)

UNREACHABLE, BAD_SIGNATURE, FORK = 2, 3, 4
KEYS_PATH = "/.well-known/tablestream-keys"


class WitnessRefusal(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Polled:
    checkpoint: Checkpoint
    cosigned: bool  # a new checkpoint, cosigned and sent
    line: str | None = None


class Witness:
    def __init__(self, state: Path, name: str, now=lambda: int(time.time())) -> None:
        self.state = state
        self.state.mkdir(parents=True, exist_ok=True)
        self.now = now
        key_file = state / "key"
        if key_file.exists():
            self.name, self.private = parse_signer_key(key_file.read_text(encoding="utf-8").strip())
        else:
            self.name, self.private = name, Ed25519PrivateKey.generate()
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(signer_key(self.name, self.private) + "\n")
        self.key = witness_key(self.name, raw_public(self.private.public_key()))

    @property
    def kept_note(self) -> str | None:
        path = self.state / "checkpoint"
        return path.read_text(encoding="utf-8") if path.exists() else None

    def _keys(self, client: httpx.Client) -> list[PublicKey]:
        try:
            return public_keys_from_document(_get(client, KEYS_PATH).json())
        except ValueError as error:
            raise WitnessRefusal(UNREACHABLE, f"the service's keys cannot be read: {error}") from None

    def poll(self, client: httpx.Client) -> Polled:
        """One poll; ``WitnessRefusal`` when the service cannot be read, signs badly, or forked."""
        note = _get(client, "/log/checkpoint").text
        keys = self._keys(client)
        try:
            new, _ = open_checkpoint(note, keys)
        except CheckpointError as error:
            raise WitnessRefusal(BAD_SIGNATURE, f"checkpoint refused: {error.message}") from None
        kept = self.kept_note
        if kept is not None:
            try:
                old, _ = open_checkpoint(kept, keys)
            except CheckpointError as error:
                raise WitnessRefusal(
                    BAD_SIGNATURE, f"the checkpoint this witness kept no longer verifies: {error.message}"
                ) from None
            self._check_consistent(client, old, new, kept, note)
            if old.text == new.text:
                return Polled(new, False)
        line = cosign(new.text, self.name, self.private, self.now())
        (self.state / "checkpoint").write_text(note, encoding="utf-8")
        answer = client.post(
            "/log/cosignatures", json={"checkpoint": new.text, "cosignature": line, "vkey": self.key.vkey}
        )
        if answer.status_code != 201:
            raise WitnessRefusal(UNREACHABLE, f"the service refused the cosignature: {answer.text[:300]}")
        return Polled(new, True, line)

    def _check_consistent(
        self, client: httpx.Client, old: Checkpoint, new: Checkpoint, kept: str, note: str
    ) -> None:
        if old.origin != new.origin:
            self._fork(kept, note, None, f"the log's origin changed from {old.origin} to {new.origin}")
        if new.size < old.size:
            self._fork(kept, note, None, f"the log shrank from {old.size} to {new.size} leaves")
        if new.size == old.size:
            if new.root != old.root:
                self._fork(kept, note, None, f"two different trees of {new.size} leaves were signed")
            return
        answer = _get(client, f"/log/consistency?from={old.size}&to={new.size}").json()
        try:
            proof = [base64.b64decode(p, validate=True) for p in answer["proof"]]
        except (KeyError, TypeError, ValueError):
            raise WitnessRefusal(UNREACHABLE, "the consistency proof cannot be read") from None
        if not merkle.verify_consistency(old.size, new.size, proof, old.root, new.root):
            self._fork(
                kept, note, answer, f"the tree of {new.size} leaves does not extend the one of {old.size}"
            )

    def _fork(self, kept: str, note: str, proof: object, why: str) -> None:
        evidence = self.state / "forks"
        evidence.mkdir(exist_ok=True)
        path = evidence / f"fork-{self.now()}.json"
        path.write_text(json.dumps({"kept": kept, "served": note, "proof": proof, "why": why}, indent=1))
        raise WitnessRefusal(
            FORK,
            f"FORK: {why}. The log is not append-only: this witness will not cosign it. "
            f"Both signed checkpoints are kept in {path}.",
        )


class Evidence(http.server.ThreadingHTTPServer):
    """What a witness shows anyone (``--serve HOST:PORT``): ``GET /checkpoint``, the last checkpoint it
    kept (a reader's ``tablestream verify --trusted-checkpoint``), ``GET /forks``, the names of the
    forks it refused, and ``GET /forks/<name>``, one's evidence: the checkpoint it kept, the one the
    log served, the consistency proof the log gave, and why. Two checkpoints of one size with
    different roots, both signed by the log, prove the fork to anyone who holds them."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: Path) -> None:
        self.state = state
        super().__init__(address, _EvidenceHandler)


class _EvidenceHandler(http.server.BaseHTTPRequestHandler):
    server: Evidence

    def do_GET(self) -> None:
        forks = self.server.state / "forks"
        names = sorted(p.name for p in forks.glob("fork-*.json")) if forks.is_dir() else []
        if self.path == "/checkpoint" and (self.server.state / "checkpoint").is_file():
            self._answer(200, "text/plain; charset=utf-8", (self.server.state / "checkpoint").read_bytes())
        elif self.path == "/forks":
            self._answer(200, "application/json", json.dumps({"forks": names}).encode())
        elif self.path.startswith("/forks/") and self.path.removeprefix("/forks/") in names:
            self._answer(200, "application/json", (forks / self.path.removeprefix("/forks/")).read_bytes())
        else:
            self._answer(404, "application/json", b'{"error": "not_found"}')

    def _answer(self, status: int, media_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None  # the witness prints its own lines


def serve_evidence(state: Path, address: str) -> Evidence:
    """The witness's evidence served on ``address`` (``HOST:PORT``) from a thread of its own."""
    host, _, port = address.rpartition(":")
    server = Evidence((host or "127.0.0.1", int(port)), state)
    threading.Thread(target=server.serve_forever, name="witness-evidence", daemon=True).start()
    return server


def _get(client: httpx.Client, path: str) -> httpx.Response:
    try:
        answer = client.get(path)
    except httpx.HTTPError as error:
        raise WitnessRefusal(UNREACHABLE, f"cannot reach the service: {error}") from None
    if answer.status_code != 200:
        raise WitnessRefusal(UNREACHABLE, f"GET {path} answered {answer.status_code}: {answer.text[:300]}")
    return answer


def default_state() -> Path:
    return Path(platformdirs.user_state_dir("tablestream-witness"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tablestream witness", description="Witness a service's public log."
    )
    parser.add_argument("url", help="the service, e.g. https://tables.example")
    parser.add_argument(
        "--state", type=Path, default=None, help="the witness's directory (default: %(default)s)"
    )
    parser.add_argument("--name", default="witness.local", help="the witness's key name, on first run")
    parser.add_argument("--interval", type=float, default=30.0, help="seconds between polls")
    parser.add_argument("--once", action="store_true", help="poll once and exit")
    parser.add_argument(
        "--serve",
        metavar="HOST:PORT",
        help="also serve what it kept to anyone: GET /checkpoint, GET /forks, GET /forks/<name>",
    )
    args = parser.parse_args(argv)
    state = args.state or default_state() / httpx.URL(args.url).host
    witness = Witness(state, args.name)
    print(f"witness {witness.name}, key {witness.key.vkey}, state {state}")
    if args.serve:
        serve_evidence(state, args.serve)  # a daemon thread: it ends with the witness
        print(f"serving its checkpoint and evidence on http://{args.serve}")
    with httpx.Client(base_url=args.url, timeout=10.0) as client:
        while True:
            try:
                polled = witness.poll(client)
            except WitnessRefusal as refusal:
                print(f"tablestream witness: {refusal.message}", file=sys.stderr)
                if refusal.code != UNREACHABLE or args.once:
                    return refusal.code
            else:
                what = "cosigned" if polled.cosigned else "unchanged"
                root = base64.b64encode(polled.checkpoint.root).decode()
                print(f"checkpoint {polled.checkpoint.size} {root}: {what}")
                if args.once:
                    return 0
            time.sleep(args.interval)  # the polling interval itself, not a synchronisation
