"""Table chat: who may speak where, what a message may hold, and who sees what.

- A seated player (seat token or seat cookie) speaks in the ``table`` channel, under the seat's
  name. Anyone else at the page is a spectator and speaks in the ``rail`` channel: as their account
  (the ``ts_account`` cookie, or an account token as the bearer) under its display name, else as a
  per-browser spectator (an HttpOnly ``ts_rail`` cookie holding a random id, set by the first
  message; only a short digest of it, the ``tag``, is ever shown). Bots never chat.
- While the game has not ended (waiting or playing), a person at the table (any credential of a
  seat, of the host or of a seated account: ``services.api.chat_routes.at_table``) never sees a
  ``rail`` message, may not speak on the rail (403 ``rail_closed_at_table``), and numbers the
  records it sees by itself (``table_numbers``: 1, 2, ... over the records not on the rail, marked
  ``"numbering": "table"``), so no number it reads counts the rail. Spectators see both channels,
  numbered by record. Once the game is finished (or expired) everyone sees everything, merged in
  the order they were sent, numbered by record.
- A message is a text (trimmed; 1 to ``MAX_TEXT`` characters, else 413 ``chat_message_too_long``;
  no control or bidirectional-override characters, 422 ``chat_control_characters``) or one
  reaction key from ``REACTIONS`` (the page shows each in the reader's language).
- Limits: per client address and per speaker at the table (429 ``chat_rate_limited`` with
  Retry-After), a cap on messages per table (409 ``chat_full``), and the host's switch (403
  ``chat_off`` while chat is turned off; the switch is itself a record of the chat stream).

The chat is stored apart from the game (``services.store.chat``); the game's stream never holds it.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from services.errors import (
    ConflictError,
    ForbiddenError,
    InvalidError,
    NotFoundError,
    TooLargeError,
    UnavailableError,
    game_not_found,
)
from services.store import chat as store_chat
from services.store.chat import ChatRecord, ChatRefused
from services.store.event_store import EventStore

MAX_TEXT = 280
REACTIONS = ("gg", "gl", "oops", "hurry", "thumbs_up", "laugh", "wow")
REPORT_REASONS = ("abuse", "spam", "coaching", "other")
MAX_REPORTED = 20
MAX_PAGE = 500
TABLE_NUMBERING = "table"  # the mark of a record numbered for a person at the table (``numbered``)
ENDED = ("finished", "expired", "closed")  # an operator's close ends the game like a finish
_BIDI = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C))


@dataclass(frozen=True, slots=True)
class Speaker:
    """Who sends a message: a seat (channel ``table``) or a spectator (channel ``rail``)."""

    seat: int | None
    name: str
    tag: str | None = None  # a spectator's short id (account or browser): never the credential

    @property
    def channel(self) -> str:
        return "rail" if self.seat is None else "table"

    @property
    def sender(self) -> str:
        """``seat:<n>`` or ``rail:<tag>``: what a reader mutes (stable for the table)."""
        return f"seat:{self.seat}" if self.seat is not None else f"rail:{self.tag}"


def spectator_tag(identity: str) -> str:
    """A short public digest of a spectator's identity (account id or browser id)."""
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:8]


def checked_text(raw: str) -> str:
    """The message as stored: trimmed, bounded, free of control characters (or a 4xx)."""
    text = raw.strip()
    if not text:
        raise InvalidError("chat_message_empty", "A chat message needs some text.")
    if len(text) > MAX_TEXT:
        raise TooLargeError(
            "chat_message_too_long",
            f"A chat message may have at most {MAX_TEXT} characters, not {len(text)}.",
        )
    if any(unicodedata.category(c) == "Cc" or c in _BIDI for c in text):
        raise InvalidError(
            "chat_control_characters", "A chat message may not hold control or text-direction characters."
        )
    return text


def table_numbers(records: Iterable[ChatRecord]) -> dict[int, int]:
    """The numbers a person at the table gives the records it sees while the game runs, by record
    number: 1, 2, ... over the records not on the rail (numbers that count nothing of the rail)."""
    numbers: dict[int, int] = {}
    for record in records:
        if record.record.get("channel") != "rail":
            numbers[record.n] = len(numbers) + 1
    return numbers


def numbered(record: Mapping[str, Any], number: int) -> dict[str, Any]:
    """A record as a person at the table reads it while the game runs: ``n`` is its table number."""
    return {**record, "n": number, "numbering": TABLE_NUMBERING}


def ended(status: str) -> bool:
    return status in ENDED


class TableChat:
    """The chat's operations over the event store (the API counts the rate limits first)."""

    def __init__(self, store: EventStore, max_messages: int, max_reports: int = 100) -> None:
        self._store = store
        self._max_messages = max_messages
        self._max_reports = max_reports

    async def say(
        self,
        game_id: str,
        speaker: Speaker,
        now_ms: int,
        text: str | None = None,
        reaction: str | None = None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {"channel": speaker.channel, "from": speaker.sender, "name": speaker.name}
        fields["seat"] = speaker.seat
        if text is not None:
            fields["text"] = text
        else:
            fields["reaction"] = reaction
        return (await self._append(game_id, "message", fields, now_ms)).record

    async def switch(self, game_id: str, enabled: bool, now_ms: int) -> dict[str, Any]:
        """The host turns chat on or off (a record of the chat stream); unchanged: no record."""
        current = await self._store.run(store_chat.state(game_id))
        if current.enabled == enabled:
            return {"enabled": enabled, "n": current.n}
        record = await self._append(game_id, "settings", {"enabled": enabled}, now_ms)
        return {"enabled": enabled, "n": record.n}

    async def _append(self, game_id: str, kind: str, fields: dict[str, Any], now_ms: int) -> ChatRecord:
        try:
            return await self._store.run(store_chat.append(game_id, kind, fields, now_ms, self._max_messages))
        except ChatRefused as refused:
            raise _refusal(game_id, refused.reason, self._max_messages) from None

    async def enabled(self, game_id: str) -> bool:
        return (await self._store.run(store_chat.state(game_id))).enabled

    async def numbers(self, game_id: str) -> dict[int, int]:
        """``table_numbers`` of the whole chat (a table's chat holds a bounded number of records)."""
        return table_numbers(await self._store.run(store_chat.read(game_id)))

    async def page(
        self, game_id: str, after: int, limit: int, hidden: bool
    ) -> tuple[list[dict[str, Any]], int, bool]:
        """The records after ``after`` a reader sees (``limit`` at most), the number to ask after
        next, and whether more may follow. ``hidden``: a person at the table while the game runs
        (no rail; ``after`` and the numbers are its table numbers)."""
        if not hidden:
            records = await self._store.run(store_chat.read(game_id, after, limit))
            return [r.record for r in records], records[-1].n if records else after, len(records) == limit
        records = await self._store.run(store_chat.read(game_id))
        numbers = table_numbers(records)
        seen = [numbered(r.record, numbers[r.n]) for r in records if numbers.get(r.n, 0) > after]
        page = seen[:limit]
        return page, page[-1]["n"] if page else after, len(seen) > limit

    async def report(
        self,
        game_id: str,
        reporter: Speaker,
        numbers: list[int],
        reason: str,
        hidden: bool,
        now_ms: int,
    ) -> str:
        """Record a report of messages the reporter can see, for an operator; 404 for any other.
        ``hidden``: a person at the table while the game runs, who names messages by table number."""
        asked = sorted(set(numbers))
        said = {n: n for n in asked}  # a record number -> the number the reporter named it by
        if hidden:
            by_table_number = {t: n for n, t in (await self.numbers(game_id)).items()}
            if unknown := [t for t in asked if t not in by_table_number]:
                raise _no_message(unknown[0])
            said = {by_table_number[t]: t for t in asked}
        wanted = sorted(said)
        found = {
            r.n: r
            for r in await self._store.run(
                store_chat.read(game_id, wanted[0] - 1, wanted[-1] - wanted[0] + 1)
            )
        }
        for n in wanted:
            record = found.get(n)
            if record is None or record.record.get("kind") != "message":
                raise _no_message(said[n])
        recorded = await self._store.run(
            store_chat.report(
                game_id,
                {
                    "game_id": game_id,
                    "messages": ",".join(str(n) for n in wanted),
                    "hashes": ",".join(found[n].hash for n in wanted),
                    "senders": ",".join(str(found[n].record.get("from")) for n in wanted),
                    "reason": reason,
                    "reporter": reporter.sender,
                    "at": str(now_ms),
                },
                self._max_reports,
            )
        )
        if recorded is None:
            raise ConflictError(
                "chat_reports_full",
                f"This table's chat was reported {self._max_reports} times already; the operators "
                "will read it. Mute a player to stop seeing their messages.",
            )
        return recorded


def _no_message(number: int) -> Exception:
    return NotFoundError("chat_message_not_found", f"This table's chat has no message {number} you can see.")


def _refusal(game_id: str, reason: str, cap: int) -> Exception:
    if reason == "no_game":
        return game_not_found(game_id)
    if reason == "chat_off":
        return ForbiddenError("chat_off", "The host has turned chat off at this table.")
    if reason == "chat_full":
        return ConflictError("chat_full", f"This table's chat holds its {cap} messages; no more can be sent.")
    return UnavailableError("chat_busy", "The chat is busy; send the message again.", retry_after=1)
