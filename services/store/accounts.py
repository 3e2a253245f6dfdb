"""Accounts in Redis: each account's own event stream, and the claims on names.

Operations in the style of ``services.store.operations`` (generators of ``services.store.requests``,
run by either event store).
An account stream ``ts:{acct:<id>}:events`` holds entries ``0-<version>`` with field ``d`` (the
encoded event) and is appended only through ``account_append.lua``, with an exact expected version.
A name is claimed by ``SET NX`` on the key of its skeleton, holding the account id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from services.store.keys import account_events_key, name_claim_key
from services.store.requests import Call, Operation, ScriptCall, version_of


@dataclass(frozen=True, slots=True)
class AccountAppend:
    """``ok``: appended, ``head`` is the new version; ``conflict``: ``head`` is the true head."""

    status: Literal["ok", "conflict"]
    head: int


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def append_account(account_id: str, expected: int, events: Sequence[bytes]) -> Operation[AccountAppend]:
    """Encoded account events at exactly ``expected`` + 1, ... (``expected`` 0 creates the account)."""
    if expected < 0 or not events:
        raise ValueError("an account append needs expected >= 0 and at least one event")
    reply = yield ScriptCall(
        "account_append", [account_events_key(account_id)], [expected, *events], durable=True
    )
    status = _text(reply[0])
    if status not in ("ok", "conflict"):
        raise RuntimeError(f"unexpected account_append reply {reply!r}")
    # when it was last used (idle unverified accounts are removed) is the caller's best-effort
    # ``retention.account_seen`` after an ``ok``: an index write that fails must not undo the append
    return AccountAppend("ok" if status == "ok" else "conflict", int(reply[1]))


def account_events(account_id: str) -> Operation[list[bytes]]:
    """Every event of an account, oldest first (empty: no such account). Accounts are short."""
    reply: Sequence[tuple[bytes, Mapping[bytes, bytes]]] = yield Call(
        ("XRANGE", account_events_key(account_id), "-", "+")
    )
    events = []
    for expected, (stream_id, fields) in enumerate(reply, start=1):
        if version_of(stream_id) != expected:
            raise RuntimeError(f"account {account_id} stream is not contiguous at {stream_id!r}")
        events.append(fields[b"d"])
    return events


def claim_name(skeleton: str, account_id: str) -> Operation[str | None]:
    """Claim a skeleton for ``account_id``: ``None`` when claimed now, else the holder's account id."""
    key = name_claim_key(skeleton)
    while True:
        if (yield Call(("SET", key, account_id, "NX"))):
            return None
        holder = yield Call(("GET", key))
        if holder is not None:  # else released in between (a failed registration): claim again
            return _text(holder)


def name_holder(skeleton: str) -> Operation[str | None]:
    holder = yield Call(("GET", name_claim_key(skeleton)))
    return None if holder is None else _text(holder)


def release_name(skeleton: str, account_id: str) -> Operation[bool]:
    """Give a claim back (after a failed registration), only while ``account_id`` holds it."""
    return bool((yield ScriptCall("release_name", [name_claim_key(skeleton)], [account_id])))
