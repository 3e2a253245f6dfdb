"""The operator's console in Redis: who is an operator, the audit log, handled chat reports, figures.

All on the indexes' server (``index_call``), beside ``ts:chat:reports`` (``services.store.chat``):

- ``ts:operators`` (set): the account ids granted the operator's role (``tablestream operator grant``);
- ``ts:operator:audit`` (stream, never trimmed): one entry per operator action, fields ``at`` (ms),
  ``operator`` (``admin`` or an account id), ``name`` (the operator's display name), ``action``,
  ``target`` and ``reason``;
- ``ts:operator:handled`` (hash): chat report id -> JSON ``{operator, name, at, note}``, set once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import redis

from services.store.chat import REPORTS
from services.store.keys import ACTIVITY, DIRTY, PREFIX, WAITING
from services.store.queue import QUEUES
from services.store.requests import Operation, index_call, text

OPERATORS = f"{PREFIX}:operators"
AUDIT = f"{PREFIX}:operator:audit"
HANDLED = f"{PREFIX}:operator:handled"
QueueClient = redis.Redis
"""RQ's connection (sync), for ``queue_depths``: the services above the store name it by this."""
RQ_QUEUE_PREFIX = "rq:queue:"  # RQ keeps each queue's waiting jobs in a list under this prefix


def is_operator(account_id: str) -> Operation[bool]:
    return bool((yield index_call("SISMEMBER", OPERATORS, account_id)))


def grant(account_id: str) -> Operation[bool]:
    """Make the account an operator; ``False`` when it was one already."""
    return bool((yield index_call("SADD", OPERATORS, account_id)))


def revoke(account_id: str) -> Operation[bool]:
    """Take the role back; ``False`` when it was not an operator."""
    return bool((yield index_call("SREM", OPERATORS, account_id)))


def operators() -> Operation[list[str]]:
    reply = yield index_call("SMEMBERS", OPERATORS)
    return sorted(text(member) for member in reply)


def record(fields: Mapping[str, str]) -> Operation[str]:
    """One audit entry; its stream id."""
    args: list[str] = ["XADD", AUDIT, "*"]
    for name, value in fields.items():
        args += [name, value]
    return text((yield index_call(*args)))


def _entries(reply: Sequence[tuple[Any, Mapping[Any, Any]]]) -> list[dict[str, str]]:
    return [
        {"id": text(entry_id), **{text(k): text(v) for k, v in fields.items()}} for entry_id, fields in reply
    ]


def newest(stream: str, before: str | None, limit: int) -> Operation[list[dict[str, str]]]:
    """Up to ``limit`` entries of ``stream``, newest first, older than the id ``before`` (exclusive)."""
    top = "+" if before is None else f"({before}"
    reply = yield index_call("XREVRANGE", stream, top, "-", "COUNT", limit)
    return _entries(reply)


def audit_page(before: str | None, limit: int) -> Operation[list[dict[str, str]]]:
    return (yield from newest(AUDIT, before, limit))


def reports_page(before: str | None, limit: int) -> Operation[list[dict[str, str]]]:
    return (yield from newest(REPORTS, before, limit))


def report(report_id: str) -> Operation[dict[str, str] | None]:
    reply = yield index_call("XRANGE", REPORTS, report_id, report_id)
    found = _entries(reply)
    return found[0] if found else None


def mark_handled(report_id: str, handled: Mapping[str, Any]) -> Operation[bool]:
    """Note a report handled; ``False`` when it already was (the first note stays)."""
    return bool((yield index_call("HSETNX", HANDLED, report_id, json.dumps(handled, sort_keys=True))))


def handled_of(report_ids: Sequence[str]) -> Operation[dict[str, dict[str, Any]]]:
    if not report_ids:
        return {}
    reply = yield index_call("HMGET", HANDLED, *report_ids)
    return {rid: json.loads(raw) for rid, raw in zip(report_ids, reply, strict=True) if raw is not None}


def figures() -> Operation[dict[str, int]]:
    """The counts the console shows beside ``/healthz``: tables waiting and running (the retention
    index of waiting or playing tables less the waiting ones), games whose projection may lag,
    chat reports kept (the queues' depths: ``queue_depths``, on RQ's server)."""
    waiting = int((yield index_call("ZCARD", WAITING)))
    active = int((yield index_call("ZCARD", ACTIVITY)))
    dirty = int((yield index_call("ZCARD", DIRTY)))
    reports = int((yield index_call("XLEN", REPORTS)))
    return {
        "tables_waiting": waiting,
        "tables_running": max(active - waiting, 0),
        "games_lagging": dirty,
        "chat_reports": reports,
    }


QUEUE_FIGURES = tuple(f"queue_{name}" for name in QUEUES)  # queue_projections, ..., queue_review


def queue_depths(queue: QueueClient) -> dict[str, int]:
    """Jobs waiting in each RQ queue (a list per queue on RQ's own server); sync, like RQ."""
    with queue.pipeline(transaction=False) as pipe:
        for name in QUEUES:
            pipe.llen(RQ_QUEUE_PREFIX + name)
        depths = pipe.execute()
    return {figure: int(depth) for figure, depth in zip(QUEUE_FIGURES, depths, strict=True)}


def active_games(start: int, count: int) -> Operation[list[str]]:
    """Up to ``count`` of the waiting or playing games (the retention index), most recently changed
    first, from the ``start``-th on."""
    reply = yield index_call("ZREVRANGE", ACTIVITY, start, start + count - 1)
    return [text(game_id) for game_id in reply]
