"""The operator's console (docs/operations.md "Operator's console"): who is an operator, and what
one may do - close a table, ban or unban an account, read and handle chat reports, find tables and
players, see the live figures - each action recorded in the audit log with who did it.

An operator is either the deployment's admin token (``TABLESTREAM_ADMIN_TOKEN``, sent as a bearer
token: recorded as ``admin``) or a registered account granted the role with ``tablestream operator
grant NAME`` (its account token, bearer or the browser's ``ts_account`` cookie: recorded by its
account id and name). Anyone else is refused with 403 ``not_an_operator``, whatever they send.

Closing a table and banning an account are events of their streams (``table_closed`` in the game's
stream, verified offline like any batch; ``account_banned``/``account_unbanned`` in the account's);
the audit log (``services.store.operator``) records every action, those included, with its author.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import msgspec
import structlog

from services.accounts.names import normalise, skeleton
from services.accounts.registry import ACCOUNT_ID, Accounts
from services.errors import ConflictError, ForbiddenError, InvalidError, NotFoundError
from services.store import chat as store_chat
from services.store import name_index, your_tables
from services.store import operator as store_operator
from services.store import ratings as store_ratings
from services.store.event_store import EventStore
from services.table.commands import GameCommands
from services.table.lifecycle import wall_clock_ms
from services.table.queries import GameQueries

ADMIN = "admin"
MAX_REASON = 200
SCANNED = 500  # running or waiting tables one page of a search by player name looks through
RECENT_GAMES = 10  # the finished games a player's card shows, most recent first
REPORT_ID = re.compile(r"\d{1,20}-\d{1,20}")
TABLE_CURSOR = re.compile(r"\d{1,9}")

log = structlog.get_logger("tablestream.operator")


@dataclass(frozen=True)
class Operator:
    """Who acts: ``id`` is ``admin`` for the admin token, else the operator account's id."""

    id: str
    name: str


CLI = Operator("cli", "cli")  # who granted or revoked the role: the command line, on the servers


def not_an_operator() -> ForbiddenError:
    return ForbiddenError(
        "not_an_operator",
        "The operator's console needs the admin token or an operator account's token.",
    )


def checked_reason(reason: str) -> str:
    reason = reason.strip()
    if not 1 <= len(reason) <= MAX_REASON:
        raise InvalidError("invalid_reason", f"A reason has 1 to {MAX_REASON} characters.")
    return reason


class OperatorConsole:
    def __init__(
        self, store: EventStore, accounts: Accounts, commands: GameCommands, queries: GameQueries
    ) -> None:
        self.store = store
        self.accounts = accounts
        self.commands = commands
        self.queries = queries

    # -- who -------------------------------------------------------------------------------------

    async def operator_account(self, account_id: str) -> bool:
        return await self.store.run(store_operator.is_operator(account_id))

    # -- actions ---------------------------------------------------------------------------------

    async def close_table(self, who: Operator, game_id: str, reason: str) -> dict[str, Any]:
        reason = checked_reason(reason)
        outcome = await self.commands.close(game_id, reason, who.id)
        await self._record(who, "table_closed", game_id, reason)
        return {**outcome.receipt(), "status": "closed"}

    async def ban(self, who: Operator, name_or_id: str, reason: str) -> dict[str, Any]:
        reason = checked_reason(reason)
        account = await self.accounts.find(name_or_id)
        state = await self.accounts.ban(account.account_id, reason, who.id)
        await self._record(who, "account_banned", state.account_id, reason)
        await self._unseat(state.account_id)
        return account_summary(state.account_id, state.display_name, state.banned, state.ban_reason)

    async def _unseat(self, account_id: str) -> None:
        """A ban ends play too: at every table the account sat at ("Your tables"), its seat tokens
        stop working and a seat still in the game is left (a bot plays it on). Its account tokens
        are refused from the ban on (``Accounts.authenticate``)."""
        for game_id in await self.store.run(your_tables.account_tables(account_id)):
            try:
                seats = await self.commands.unseat_account(game_id, account_id)
            except NotFoundError:  # the table was removed (retention) since it was noted
                continue
            if seats:
                log.info("banned_seats_left", account_id=account_id, game_id=game_id, seats=seats)

    async def unban(self, who: Operator, name_or_id: str, reason: str) -> dict[str, Any]:
        reason = checked_reason(reason)
        account = await self.accounts.find(name_or_id)
        state = await self.accounts.unban(account.account_id, reason, who.id)
        await self._record(who, "account_unbanned", state.account_id, reason)
        return account_summary(state.account_id, state.display_name, state.banned, state.ban_reason)

    async def handle_report(self, who: Operator, report_id: str, note: str, now_ms: int) -> dict[str, Any]:
        note = checked_reason(note)
        if (
            not REPORT_ID.fullmatch(report_id)
            or await self.store.run(store_operator.report(report_id)) is None
        ):
            raise NotFoundError("report_not_found", f"There is no chat report {report_id!r}.")
        handled = {"operator": who.id, "name": who.name, "at": now_ms, "note": note}
        if not await self.store.run(store_operator.mark_handled(report_id, handled)):
            raise ConflictError("report_handled", "This report was already marked handled.")
        await self._record(who, "report_handled", report_id, note)
        return {"id": report_id, "handled": handled}

    async def _record(self, who: Operator, action: str, target: str, reason: str) -> None:
        await record(self.store, who, action, target, reason)

    # -- reading ---------------------------------------------------------------------------------

    async def audit(self, before: str | None, limit: int) -> tuple[list[dict[str, str]], str | None]:
        """A page of the audit log, newest first, and the cursor of the next (``None``: the last)."""
        entries = await self.store.run(store_operator.audit_page(before, limit + 1))
        return entries[:limit], entries[limit - 1]["id"] if len(entries) > limit else None

    async def reports(self, before: str | None, limit: int) -> tuple[list[dict[str, Any]], str | None]:
        """A page of chat reports, newest first, each with the reported messages' text and whether
        handled, and the cursor of the next page (``None``: the last)."""
        entries = await self.store.run(store_operator.reports_page(before, limit + 1))
        following = entries[limit - 1]["id"] if len(entries) > limit else None
        entries = entries[:limit]
        handled = await self.store.run(store_operator.handled_of([e["id"] for e in entries]))
        shown = []
        for entry in entries:
            numbers = [int(n) for n in entry.get("messages", "").split(",") if n.isdigit()]
            shown.append(
                {
                    "id": entry["id"],
                    "game_id": entry.get("game_id", ""),
                    "reason": entry.get("reason", ""),
                    "reporter": entry.get("reporter", ""),
                    "at": int(entry.get("at", "0") or 0),
                    "messages": await self._messages(entry.get("game_id", ""), numbers),
                    "handled": handled.get(entry["id"]),
                }
            )
        return shown, following

    async def _messages(self, game_id: str, numbers: list[int]) -> list[dict[str, Any]]:
        if not game_id or not numbers:
            return []
        try:
            records = await self.store.run(
                store_chat.read(game_id, min(numbers) - 1, max(numbers) - min(numbers) + 1)
            )
        except ValueError:  # a game id no table can have
            return []
        found = {r.n: r.record for r in records}
        messages: list[dict[str, Any]] = []
        for n in numbers:
            record = found.get(n)
            if record is None:  # removed with its table by retention
                messages.append({"n": n, "gone": True})
                continue
            messages.append(
                {
                    "n": n,
                    "from": record.get("from"),
                    "name": record.get("name"),
                    "channel": record.get("channel"),
                    "text": record.get("text"),
                    "reaction": record.get("reaction"),
                }
            )
        return messages

    async def table(self, game_id: str) -> dict[str, Any]:
        folded = await self.queries.load(game_id)
        return table_summary(folded.state, folded.version)

    async def find_tables(self, query: str, cursor: str | None, limit: int) -> dict[str, Any]:
        """A page of tables: on the first, the table whose id is ``query``; then the waiting or
        running tables, most recently changed first, where a seat's name (or its account's name)
        contains ``query``, case-insensitive. A page looks through at most ``SCANNED`` tables of the
        index; ``next`` is where the following page starts in it (``None``: nothing is left)."""
        query = query.strip()
        start = table_offset(cursor)
        found: list[dict[str, Any]] = []
        if cursor is None:
            with contextlib.suppress(NotFoundError, ValueError):  # no such table, or an impossible id
                found.append(await self.table(query))
        wanted = query.casefold()
        game_ids = await self.store.run(store_operator.active_games(start, SCANNED + 1))
        for position, game_id in enumerate(game_ids[:SCANNED], start=start):
            if found and found[0]["game_id"] == game_id and cursor is None:
                continue
            try:
                folded = await self.queries.load(game_id)
            except NotFoundError:  # removed since the index was read
                continue
            names = [p.name for p in folded.state.seated] + [
                p.account.name for p in folded.state.seated if p.account is not None
            ]
            if any(wanted in name.casefold() for name in names):
                if len(found) == limit:  # one more than the page: the next page starts here
                    return {"tables": found, "next": str(position)}
                found.append(table_summary(folded.state, folded.version))
        more = len(game_ids) > SCANNED
        return {"tables": found, "next": str(start + SCANNED) if more else None}

    async def find_players(self, query: str, cursor: str | None, limit: int) -> dict[str, Any]:
        """A page of accounts whose name begins with ``query`` or with a name that looks like it
        (``match``: ``exact``, ``prefix`` or ``lookalike``), in the order of their folded names, read
        from the name index (``services.store.name_index``); an account id finds its account."""
        query = query.strip()
        if ACCOUNT_ID.fullmatch(query):
            state = await self.accounts.load(query)
            players = [] if state is None or cursor is not None else [self._found(state, "id")]
            return {"players": players, "next": None}
        normalised = normalise(query)
        prefix = skeleton(normalised)
        members = await self.store.run(name_index.with_prefix(prefix, name_cursor(cursor, prefix), limit + 1))
        players = []
        for raw in members[:limit]:
            _, account_id = name_index.split(raw)
            state = await self.accounts.load(account_id)
            if state is None:  # removed since it was indexed
                continue
            if state.normalised == normalised:
                match = "exact"
            elif state.normalised.startswith(normalised):
                match = "prefix"
            else:
                match = "lookalike"
            players.append(self._found(state, match))
        following = encode_cursor(members[limit - 1]) if len(members) > limit else None
        return {"players": players, "next": following}

    @staticmethod
    def _found(state: Any, match: str) -> dict[str, Any]:
        return {
            **account_summary(state.account_id, state.display_name, state.banned, state.ban_reason),
            "match": match,
        }

    async def find_player(self, name_or_id: str) -> dict[str, Any]:
        """An account's card, by name or id: whether it is banned, and its recent finished games
        with links to their replays."""
        state = await self.accounts.find(name_or_id.strip())
        operator = await self.operator_account(state.account_id)
        total, game_ids = await self.store.run(store_ratings.history_page(state.account_id, 0, RECENT_GAMES))
        records = await self.store.run(store_ratings.records(game_ids))
        return {
            **account_summary(state.account_id, state.display_name, state.banned, state.ban_reason),
            "operator": operator,
            "has_password": state.password_hash is not None,
            "games_played": total,
            "recent_games": [
                recent_game(g, raw, state.account_id) for g, raw in zip(game_ids, records, strict=True)
            ],
        }

    async def figures(
        self, readiness: dict[str, Any], queue: store_operator.QueueClient | None
    ) -> dict[str, Any]:
        counts = await self.store.run(store_operator.figures())
        lag_ms = await self.store.oldest_dirty_age_ms()
        depths: dict[str, int | None] = dict.fromkeys(store_operator.QUEUE_FIGURES)
        if queue is not None:
            depths.update(await anyio.to_thread.run_sync(store_operator.queue_depths, queue))
        return {**readiness, "lag_ms": lag_ms, **counts, **depths}


async def record(store: EventStore, who: Operator, action: str, target: str, reason: str) -> None:
    """One entry of the audit log: who did what to which table, account or report, and why."""
    fields = {
        "at": str(wall_clock_ms()),
        "operator": who.id,
        "name": who.name,
        "action": action,
        "target": target,
        "reason": reason,
    }
    await store.run(store_operator.record(fields))
    log.info("operator_action", operator=who.id, action=action, target=target)


async def grant(store: EventStore, accounts: Accounts, name_or_id: str) -> tuple[str, bool]:
    """``tablestream operator grant``: the account's id and whether it was newly made an operator
    (recorded in the audit log as done by ``cli``)."""
    account = await accounts.find(name_or_id)
    granted = await store.run(store_operator.grant(account.account_id))
    if granted:
        await record(store, CLI, "operator_granted", account.account_id, account.display_name)
    return account.account_id, granted


async def revoke(store: EventStore, accounts: Accounts, name_or_id: str) -> tuple[str, bool]:
    account = await accounts.find(name_or_id)
    revoked = await store.run(store_operator.revoke(account.account_id))
    if revoked:
        await record(store, CLI, "operator_revoked", account.account_id, account.display_name)
    return account.account_id, revoked


def recent_game(game_id: str, raw: bytes | None, account_id: str) -> dict[str, Any]:
    """One finished game of a player's card, from its record (``projections.ratings``): the game,
    when it ended, the player's place and score, and the replay's page."""
    game: dict[str, Any] = {"game_id": game_id, "replay": f"/replay/{game_id}"}
    if raw is None:  # recorded, then its record removed: the id and the replay's page only
        return game
    record: dict[str, Any] = msgspec.json.decode(raw)
    own = next((s for s in record.get("seats", ()) if (s.get("account") or {}).get("id") == account_id), None)
    return {
        **game,
        "game": record.get("game"),
        "title": record.get("title"),
        "finished_at": record.get("finished_at"),
        "rated": record.get("rated"),
        "rank": None if own is None else own.get("rank"),
        "score": None if own is None else own.get("score"),
        "players": len(record.get("seats", ())),
    }


def invalid_cursor() -> InvalidError:
    return InvalidError(
        "invalid_cursor",
        "'cursor' must be the 'next' value of the page before, unchanged, with the same 'q'.",
    )


def table_offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not TABLE_CURSOR.fullmatch(cursor):
        raise invalid_cursor()
    return int(cursor)


def encode_cursor(member: bytes) -> str:
    return base64.urlsafe_b64encode(member).decode().rstrip("=")


def name_cursor(cursor: str | None, prefix: str) -> bytes | None:
    """The name index's member a page of players starts after; ``invalid_cursor`` for a cursor that
    is not one, or one of another search."""
    if cursor is None:
        return None
    try:
        member = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        folded, _ = name_index.split(member)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise invalid_cursor() from None
    if not folded.startswith(prefix) or encode_cursor(member) != cursor:
        raise invalid_cursor()
    return member


def account_summary(account_id: str, name: str, banned: bool, reason: str | None) -> dict[str, Any]:
    return {"account_id": account_id, "name": name, "banned": banned, "ban_reason": reason}


def table_summary(state: Any, version: int) -> dict[str, Any]:
    """What the console shows of a table: nothing hidden (no hands, no seeds), names and accounts."""
    return {
        "game_id": state.game_id,
        "game": state.game,
        "status": state.status,
        "version": version,
        "seats": state.players,
        "practice": state.practice,
        "players": [
            {
                "seat": p.seat,
                "name": p.name,
                "account": {"id": p.account.id, "name": p.account.name} if p.account else None,
                "bot": p.seat in state.bots,
            }
            for p in state.seated
        ],
    }
