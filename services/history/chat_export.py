"""The chat section of a finished game's export, and its offline check.

The section is separate from the game's entries (whose chain it never touches)::

    "chat": {"format": "tablestream-chat/1",
             "records": [{"n": 1, "hash": "<hex>", "data": "<the record's stored JSON>"}, ...],
             "head": {"n": <last n>, "hash": "<its hash>"}}

Each record's ``data`` is the exact stored bytes (canonical JSON: sorted keys, no spaces, UTF-8),
and ``hash`` is ``SHA-256(previous hash hex || data)`` from 64 zeros (``services.store.chat``). The
verifier recomputes the chain: a record whose data or hash was changed, a record removed, added or
moved, or a head that is not the chain's, fails the ``chat`` check with the record named (its
number, sender and the game version it was sent at). The game's head is given too: a record sent
at a version past it is named as well.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

CHAT_FORMAT = "tablestream-chat/1"
GENESIS = "0" * 64


def chat_section(stored: Sequence[tuple[int, bytes, str]]) -> dict[str, Any]:
    """The section from the records as stored: (n, bytes, hash), in order."""
    records = [{"n": n, "hash": digest, "data": data.decode("utf-8")} for n, data, digest in stored]
    head = {"n": stored[-1][0], "hash": stored[-1][2]} if stored else {"n": 0, "hash": GENESIS}
    return {"format": CHAT_FORMAT, "records": records, "head": head}


def chat_problems(section: Any, game_head: int | None = None) -> tuple[int, list[str]]:
    """Check a chat section: (records that verified, the problems found, each naming its record)."""
    if not isinstance(section, dict) or section.get("format") != CHAT_FORMAT:
        return 0, [f"the chat section is not a {CHAT_FORMAT} document"]
    records = section.get("records")
    head = section.get("head")
    if not isinstance(records, list) or not isinstance(head, dict):
        return 0, ["the chat section has no records list or no head"]
    problems: list[str] = []
    previous = GENESIS
    good = 0
    for position, item in enumerate(records, start=1):
        if not (
            isinstance(item, dict) and isinstance(item.get("data"), str) and isinstance(item.get("hash"), str)
        ):
            problems.append(f"record {position} is not {{n, hash, data}}")
            return good, problems
        data = item["data"].encode("utf-8")
        digest = hashlib.sha256(previous.encode("ascii") + data).hexdigest()
        label = _label(item, position)
        if item.get("n") != position:
            problems.append(
                f"{label}: numbered {item.get('n')!r}, expected {position} (a record removed, added or moved)"
            )
        if digest != item["hash"]:
            problems.append(f"{label} was altered: its hash does not chain (expected {digest[:16]}…)")
        else:
            record = _parsed(item["data"])
            if record is None or record.get("n") != position:
                problems.append(f"{label}: its data is not the record numbered {position}")
            elif (
                game_head is not None
                and isinstance(record.get("version"), int)
                and record["version"] > game_head
            ):
                problems.append(
                    f"{label}: sent at version {record['version']}, past the game's head {game_head}"
                )
            else:
                good += 1
        previous = item["hash"]
    expected_n = len(records)
    if head.get("n") != expected_n or head.get("hash") != (records[-1]["hash"] if records else GENESIS):
        problems.append(f"the chat head {head.get('n')!r} is not the chain's last record {expected_n}")
    return good, problems


def _parsed(data: str) -> dict[str, Any] | None:
    try:
        record = json.loads(data)
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def _label(item: dict[str, Any], position: int) -> str:
    record = _parsed(item["data"]) or {}
    sender = record.get("from", "?")
    return f"chat record {position} (from {sender}, at version {record.get('version', '?')})"
