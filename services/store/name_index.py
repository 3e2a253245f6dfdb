"""The operator's index of account names, for a search by prefix or by lookalike.

``ts:operator:names`` (sorted set on the indexes' server, every score 0) holds one member per
account: its name's confusables skeleton (``services.accounts.names.skeleton``, the fold that decides which
names look alike when a name is claimed), a NUL, and the account id. All scores being equal, Redis
orders the members by their bytes, so the accounts whose skeleton begins with a query's skeleton are
one ``ZRANGEBYLEX`` range, read a page at a time. A skeleton never holds a NUL (names refuse
control characters), and UTF-8 never holds the byte 0xFF, which therefore closes every range.

It is written when an account is registered (``services.accounts.registry``), dropped when retention
removes an account (``services.store.retention``), and rebuilt from the account streams by
``workers.name_index``: whole by ``tablestream rebuild-all`` (``workers.backup``), and filled in
place by the sweeper when ``ts:operator:names:indexed`` is missing (the accounts registered before
this index existed, or all of them after the indexes' server lost its data, the mark with it).
"""

from __future__ import annotations

from collections.abc import Sequence

from services.store.keys import PREFIX
from services.store.requests import Operation, index_call

NAMES = f"{PREFIX}:operator:names"
MARK = f"{NAMES}:indexed"  # every stored account was indexed once (workers.name_index)
SEPARATOR = b"\x00"
END = b"\xff"  # after every UTF-8 byte: the end of a prefix's range


def member(skeleton: str, account_id: str) -> bytes:
    return skeleton.encode() + SEPARATOR + account_id.encode()


def split(raw: bytes) -> tuple[str, str]:
    """``(skeleton, account_id)`` of a member; ``ValueError`` for bytes that are not one."""
    skeleton, separator, account_id = raw.partition(SEPARATOR)
    if not separator or not account_id:
        raise ValueError("not a member of the name index")
    return skeleton.decode(), account_id.decode()


def add(skeleton: str, account_id: str) -> Operation[None]:
    yield index_call("ZADD", NAMES, 0, member(skeleton, account_id))


def remove(skeleton: str, account_id: str) -> Operation[None]:
    yield index_call("ZREM", NAMES, member(skeleton, account_id))


BUILDING = f"{NAMES}:building"  # a rebuild writes here, then renames it over ``NAMES``


def indexed() -> Operation[bool]:
    return bool((yield index_call("EXISTS", MARK)))


def mark_indexed(now_ms: int) -> Operation[None]:
    """Mark the index done, as of ``now_ms`` the first time (a rebuild or import again keeps it)."""
    yield index_call("SET", MARK, now_ms, "NX")


def add_many(entries: Sequence[tuple[str, str]], key: str = NAMES) -> Operation[None]:
    """Index many accounts at once: ``(skeleton, account_id)`` pairs."""
    if entries:
        args: list[str | bytes | int] = ["ZADD", key]
        for skeleton, account_id in entries:
            args += [0, member(skeleton, account_id)]
        yield index_call(*args)


def start_rebuild() -> Operation[None]:
    yield index_call("DEL", BUILDING)


def finish_rebuild(count: int) -> Operation[None]:
    """Put the rebuilt index in place in one step (no account: the index is emptied)."""
    yield index_call("RENAME", BUILDING, NAMES) if count else index_call("DEL", NAMES)


def with_prefix(prefix: str, after: bytes | None, limit: int) -> Operation[list[bytes]]:
    """Up to ``limit`` members whose skeleton begins with ``prefix``, in order, after the member
    ``after`` (exclusive) when given."""
    start = b"[" + prefix.encode() if after is None else b"(" + after
    reply = yield index_call("ZRANGEBYLEX", NAMES, start, b"[" + prefix.encode() + END, "LIMIT", 0, limit)
    return [bytes(m) if not isinstance(m, str) else m.encode() for m in reply]
