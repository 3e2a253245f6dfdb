"""The post-game review: for each move a person made, what the ``strong`` bot would have played.

Only for a finished game (nothing is hidden any more), off the request path: ``GET /games/{id}/
review?seat=N`` (``services.api.review_routes``) answers from the cache, or queues ``build_review``
on the ``review`` queue (``services.store.queue.REVIEW_QUEUE``, after projections and bots in every
worker's order) and answers 202 until it is there. The result is cached in Redis under
``ts:{<game>}:review:<seat>`` for ``REVIEW_TTL`` seconds and built again when missing.

For every batch the seat's own ``command`` began (not its timeouts, not a bot's moves), the seat's
view just before it (``projections.views.seat_view``: exactly what the player saw) is handed to
``bots.levels.advise`` at level ``strong`` (``REVIEW_BUDGET``); the entry says what was
played, the bot's choice, whether they differ, and the share of the bot's simulations behind each
candidate. Its
chance is keyed by the stream's head hash, the version and the seat (the game is over: nothing it
draws can reveal anything), so a rebuild gives the same review.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec
import redis
import structlog
from rq import get_current_job

from bots import BotRandom
from bots.levels import advise
from bots.search import SIMULATIONS, Budget
from projections.views import seat_view
from services.history.folding import Folded, advance
from services.history.records import Entry, decode_stored
from services.store.queue import review_key
from workers.stores import job_store

REVIEW_LEVEL = "strong"
REVIEW_BUDGET = Budget(simulations=SIMULATIONS, cpu_seconds=5.0)
"""The production number of simulations, with a CPU bound no move reaches on a working machine: off
the request path, a review is bound by its simulations, so a rebuild finds the same choices."""
REVIEW_TTL = 7 * 24 * 3600  # seconds a review stays cached; a request after that builds it again
PERSON_KINDS = frozenset({"command"})  # the records of a seat's own choices

log = structlog.get_logger("tablestream.review")
_encoder = msgspec.json.Encoder(order="deterministic")


def _batches(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The stream cut into the batches one command appended (each begins with its record)."""
    batches: list[list[Entry]] = []
    for entry in entries:
        if decode_stored(entry.data).command is not None or not batches:
            batches.append([entry])
        else:
            batches[-1].append(entry)
    return batches


def review_rng(head_hash: str, version: int, seat: int) -> BotRandom:
    key = hashlib.sha256(f"tablestream-review\n{head_hash}\n{version}\n{seat}".encode()).digest()
    return BotRandom(key)


def review_moves(game_id: str, entries: Sequence[Entry], seat: int) -> dict[str, Any]:
    """The review of ``seat``'s moves in a finished game's stream (versions 1..head, in order)."""
    folded: Folded | None = None
    moves: list[dict[str, Any]] = []
    head_hash = entries[-1].hash
    for batch in _batches(entries):
        record = decode_stored(batch[0].data).command
        if (
            folded is not None
            and record is not None
            and record.kind in PERSON_KINDS
            and record.seat == seat
            and folded.state.status == "playing"
        ):
            view = seat_view(folded.state, folded.version, seat)
            if view["legal"]:
                rng = review_rng(head_hash, folded.version, seat)
                advice = advise(folded.state.game, view, REVIEW_LEVEL, rng, REVIEW_BUDGET)
                played = dict(record.body)
                shares = [{"command": command, "share": round(share, 4)} for command, share in advice.shares]
                reason = None if advice.reason is None else {"key": advice.reason, "params": advice.params}
                moves.append(
                    {
                        "version": batch[0].version,
                        "played": played,
                        "strong": advice.command,
                        "differs": _encoder.encode(played) != _encoder.encode(advice.command),
                        "shares": shares,
                        "played_share": next(
                            (s["share"] for s in shares if _same(s["command"], played)), 0.0
                        ),
                        "reason": reason,
                    }
                )
        folded = advance(game_id, folded, batch)
    assert folded is not None
    return {
        "game_id": game_id,
        "seat": seat,
        "level": REVIEW_LEVEL,
        "head": folded.version,
        "moves": moves,
        "differs": sum(1 for move in moves if move["differs"]),
    }


def _same(a: Any, b: Any) -> bool:
    return bool(_encoder.encode(a) == _encoder.encode(b))


def build_review(game_id: str, seat: int) -> str:
    """The RQ job: review ``seat``'s moves of the finished game ``game_id`` and cache it."""
    job = get_current_job()
    assert job is not None, "build_review runs as an RQ job"
    connection: redis.Redis = job.connection
    store = job_store(job)
    entries = store.read(game_id)
    if not entries:
        return "missing"
    folded = advance(game_id, None, entries)
    if folded.state.status != "finished":
        return "not_finished"
    review = review_moves(game_id, entries, seat)
    connection.set(review_key(game_id, seat), _encoder.encode(review), ex=REVIEW_TTL)
    log.info(
        "review_built", game_id=game_id, seat=seat, moves=len(review["moves"]), differs=review["differs"]
    )
    return "built"
