"""The players' read models in Redis: finish log, history records, ratings, leaderboards.

Operations in the style of ``services.store.operations`` (``services.store.requests``). A finished
game is recorded by one run of ``record_finish.lua``: it checks the game is not recorded yet (a
duplicate or late poke changes nothing) and that no other game was recorded since the ratings were
read (the finish sequence is the version of the ratings, like a stream head), then appends the game
to the finish log and writes its record, the new ratings, leaderboard scores and history entries
together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from services.store.keys import RATINGS, board_key, check_game_id, history_key, rating_key
from services.store.requests import Call, Operation, Pipelined, ScriptCall, int_or_zero, version_of


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


@dataclass(frozen=True, slots=True)
class SeatAccount:
    """One account's part in a recorded game: its display name, and its new rating if rated."""

    account_id: str
    display_name: str
    rating: bytes | None = None  # JSON
    ordinal: float | None = None  # the leaderboard's score; None: not listed (provisional)


@dataclass(frozen=True, slots=True)
class Recorded:
    status: Literal["ok", "dup", "conflict"]
    seq: int


@dataclass(frozen=True, slots=True)
class LoggedFinish:
    seq: int
    game_id: str
    finished_at: float


@dataclass
class Models:
    """Every derived players' read model, as stored (what a rebuild must reproduce exactly)."""

    finished: dict[str, int] = field(default_factory=dict)
    records: dict[str, bytes] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    ratings: dict[str, dict[str, bytes]] = field(default_factory=dict)  # game -> account -> JSON
    boards: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # best first
    histories: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # account -> (game, seq)


def is_recorded(game_id: str) -> Operation[bool]:
    return bool((yield Call(("HEXISTS", RATINGS.finished, check_game_id(game_id)))))


def current_ratings(game: str, account_ids: Sequence[str]) -> Operation[tuple[int, list[bytes | None], int]]:
    """The finish sequence, then the accounts' ratings in ``game`` and how many established players
    its leaderboard lists (read in that order: a game recorded in between makes the sequence stale,
    so the recording conflicts and reads again)."""
    seq = int_or_zero((yield Call(("GET", RATINGS.seq))))
    established = int((yield Call(("ZCARD", board_key(game)))))
    if not account_ids:
        return seq, [], established
    ratings: list[bytes | None] = yield Call(("HMGET", rating_key(game), *account_ids))
    return seq, ratings, established


def record_finish(
    expected_seq: int,
    game_id: str,
    game: str,
    finished_at: float,
    record: bytes,
    accounts: Sequence[SeatAccount],
) -> Operation[Recorded]:
    keys = [
        RATINGS.seq,
        RATINGS.log,
        RATINGS.finished,
        RATINGS.records,
        RATINGS.names,
        rating_key(game),
        board_key(game),
        *(history_key(check_game_id(a.account_id)) for a in accounts),
    ]
    args: list[str | bytes | int] = [expected_seq, check_game_id(game_id), repr(finished_at), record]
    for account in accounts:
        ordinal = "" if account.ordinal is None else repr(account.ordinal)
        args += [account.account_id, account.display_name, account.rating or b"", ordinal]
    reply = yield ScriptCall("record_finish", keys, args)
    status = _text(reply[0])
    if status not in ("ok", "dup", "conflict"):
        raise RuntimeError(f"unexpected record_finish reply {reply!r}")
    return Recorded(status, int(reply[1]))  # type: ignore[arg-type]


# -- reads ----------------------------------------------------------------------------------------


def finish_log() -> Operation[list[LoggedFinish]]:
    """Every recorded finish in its sequence order: the order a rebuild folds the games in."""
    reply: Sequence[tuple[bytes, Mapping[bytes, bytes]]] = yield Call(("XRANGE", RATINGS.log, "-", "+"))
    return [LoggedFinish(version_of(sid), _text(f[b"g"]), float(f[b"t"])) for sid, f in reply]


def records(game_ids: Sequence[str]) -> Operation[list[bytes | None]]:
    if not game_ids:
        return []
    found: list[bytes | None] = yield Call(("HMGET", RATINGS.records, *game_ids))
    return found


def history_page(account_id: str, offset: int, limit: int) -> Operation[tuple[int, list[str]]]:
    """How many games ``account_id`` played, and a page of them, most recent first."""
    key = history_key(check_game_id(account_id))
    total, ids = yield Pipelined((Call(("ZCARD", key)), Call(("ZREVRANGE", key, offset, offset + limit - 1))))
    return int(total), [_text(i) for i in ids]


def leaderboard_page(
    game: str, offset: int, limit: int
) -> Operation[tuple[int, int, list[tuple[str, float]]]]:
    """How many established players ``game``'s leaderboard lists, how many rated players it hides
    (provisional: rated, not listed), and a page of the listed, best first."""
    key = board_key(game)
    total, rated, rows = yield Pipelined(
        (
            Call(("ZCARD", key)),
            Call(("HLEN", rating_key(game))),
            Call(("ZREVRANGE", key, offset, offset + limit - 1, "WITHSCORES")),
        )
    )
    return int(total), max(0, int(rated) - int(total)), [(_text(m), float(score)) for m, score in rows]


def ratings_of(game: str, account_ids: Sequence[str]) -> Operation[list[bytes | None]]:
    if not account_ids:
        return []
    found: list[bytes | None] = yield Call(("HMGET", rating_key(game), *account_ids))
    return found


def account_ratings(account_id: str, games: Sequence[str]) -> Operation[dict[str, bytes]]:
    """An account's rating JSON in each of ``games`` where it has one."""
    replies = yield Pipelined(tuple(Call(("HGET", rating_key(game), account_id)) for game in games))
    return {game: reply for game, reply in zip(games, replies, strict=True) if reply is not None}


def names_of(account_ids: Sequence[str]) -> Operation[list[str | None]]:
    if not account_ids:
        return []
    found = yield Call(("HMGET", RATINGS.names, *account_ids))
    return [None if name is None else _text(name) for name in found]


# -- the whole models: for rebuilds ----------------------------------------------------------------


def stored_models(games: Sequence[str]) -> Operation[Models]:
    """Every derived model as stored now (the finish log and sequence are not derived)."""
    finished, stored_records, names = yield Pipelined(
        (
            Call(("HGETALL", RATINGS.finished)),
            Call(("HGETALL", RATINGS.records)),
            Call(("HGETALL", RATINGS.names)),
        )
    )
    models = Models(
        finished={_text(k): int(v) for k, v in finished.items()},
        records={_text(k): bytes(v) for k, v in stored_records.items()},
        names={_text(k): _text(v) for k, v in names.items()},
    )
    for game in games:
        ratings, board = yield Pipelined(
            (Call(("HGETALL", rating_key(game))), Call(("ZREVRANGE", board_key(game), 0, -1, "WITHSCORES")))
        )
        if ratings:
            models.ratings[game] = {_text(k): bytes(v) for k, v in ratings.items()}
        if board:
            models.boards[game] = [(_text(m), float(s)) for m, s in board]
    for account_id in models.names:
        rows = yield Call(("ZREVRANGE", history_key(account_id), 0, -1, "WITHSCORES"))
        models.histories[account_id] = [(_text(m), int(float(s))) for m, s in rows]
    return models


def replace_models(old: Models, new: Models, games: Sequence[str]) -> Operation[None]:
    """Delete the derived keys of ``old`` and write ``new`` (in one round trip, not atomically: a
    rebuild runs while no worker records games)."""
    calls: list[Call] = [Call(("DEL", RATINGS.finished, RATINGS.records, RATINGS.names))]
    calls += [Call(("DEL", rating_key(g), board_key(g))) for g in games]
    calls += [Call(("DEL", history_key(a))) for a in {*old.names, *new.names}]
    if new.finished:
        calls.append(Call(("HSET", RATINGS.finished, *_flat(new.finished))))
    if new.records:
        calls.append(Call(("HSET", RATINGS.records, *_flat(new.records))))
    if new.names:
        calls.append(Call(("HSET", RATINGS.names, *_flat(new.names))))
    for game, ratings in new.ratings.items():
        calls.append(Call(("HSET", rating_key(game), *_flat(ratings))))
    for game, board in new.boards.items():
        calls.append(Call(("ZADD", board_key(game), *[x for m, s in board for x in (repr(s), m)])))
    for account_id, rows in new.histories.items():
        if rows:
            calls.append(Call(("ZADD", history_key(account_id), *[x for g, q in rows for x in (q, g)])))
    yield Pipelined(tuple(calls))


def _flat(mapping: Mapping[str, str | bytes | int]) -> list[str | bytes | int]:
    return [x for key, value in mapping.items() for x in (key, value)]
