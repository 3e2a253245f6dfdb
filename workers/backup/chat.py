"""A table's chat in a backup: part of its game's line, never of the game's chain.

A game with a chat carries its chat stream as the export's chat section (``chat``) and its state hash
(``chat_state``); the import checks them with the chat verifier of the export and writes them in the
game's own ``MULTI`` (``workers.backup.games.write_game``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from services.history.chat_export import GENESIS, chat_problems, chat_section
from services.store.chat import ChatKeys
from services.store.requests import text
from workers.backup.frame import hash_text


def queue_reads(pipe: Any, game_id: str) -> None:
    """Queue the reads of the game's chat (its stream, then its state) in the game's ``MULTI``."""
    keys = ChatKeys(game_id)
    pipe.xrange(keys.stream, "-", "+")
    pipe.hgetall(keys.state)


def chat_fields(chat_stream: Any, chat_state: Any) -> dict[str, Any]:
    """The game line's ``chat`` and ``chat_state`` from what ``queue_reads`` read (none: no chat)."""
    if not (chat_stream or chat_state):
        return {}
    stored = [(int(text(i).split("-")[1]), f[b"d"], text(f[b"h"])) for i, f in chat_stream]
    return {"chat": chat_section(stored), "chat_state": hash_text(chat_state)}


def queue_writes(pipe: Any, game_id: str, record: Mapping[str, Any]) -> None:
    """Queue the writes of the game's chat, restored with it (in its ``MULTI``)."""
    keys = ChatKeys(game_id)
    for item in (record.get("chat") or {}).get("records", []):
        pipe.xadd(keys.stream, {"d": item["data"].encode("utf-8"), "h": item["hash"]},
                  id=f"0-{item['n']}")  # fmt: skip
    if record.get("chat_state"):
        pipe.hset(keys.state, mapping=record["chat_state"])


def verify_chat(record: Mapping[str, Any]) -> list[str]:
    """Why the game's chat (``chat``: its export section, ``chat_state``: the state hash) is not the
    chain the server appended (empty: it is, or the game has no chat). The chat verifier of the
    export checks every record's hash and number, and that none names a version past the game's
    head; the state must be the chain's head, its message count and its last on/off setting."""
    if "chat" not in record and "chat_state" not in record:
        return []
    section, chat_state = record.get("chat"), record.get("chat_state")
    if not isinstance(chat_state, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in chat_state.items()
    ):
        return ["chat: its state is not an object of strings"]
    entries = record.get("entries")
    head = entries[-1].get("version") if isinstance(entries, list) and entries else None
    _, problems = chat_problems(section, head if isinstance(head, int) else None)
    if problems:
        return [f"chat: {p}" for p in problems]
    assert isinstance(section, dict)
    parsed = [json.loads(item["data"]) for item in section["records"]]
    messages = sum(1 for r in parsed if r.get("kind") == "message")
    settings = [r for r in parsed if r.get("kind") == "settings"]
    enabled = "1" if not settings or settings[-1].get("enabled", True) else "0"
    expected = {"n": str(section["head"]["n"]), "hash": section["head"]["hash"]}
    found = {"n": chat_state.get("n", "0"), "hash": chat_state.get("hash", GENESIS)}
    if (
        found != expected
        or chat_state.get("messages", "0") != str(messages)
        or (chat_state.get("enabled", "1") != enabled)
    ):
        return [
            f"chat: its state {chat_state} is not the chain's (head {expected['n']}, {messages} messages)"
        ]
    return []
