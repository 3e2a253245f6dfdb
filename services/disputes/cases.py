"""Disputes (docs/fairness.md "Disputes"): open one on a round, add evidence, resolve it, and
build the bundle that settles it.

Who acts is decided by the routes (``services.api.dispute_routes``): a seated player of the game
(their seat token, like every seat route) or an operator (``services.operating.operator``). Each dispute is
its own event stream (``services.store.disputes``); the decisions are the pure aggregate's
(``domain.disputes``). Appends are compare-and-set on the stream's length, so two concurrent
writers re-decide on what the other wrote instead of both succeeding.

Nothing hidden is shown before the game ends: a dispute on a running game is recorded at once,
but its bundle is built only once nothing in it is hidden any more (``services.history.cut``);
until then the bundle answers 409 ``dispute_sealed`` with the reason in a sentence, and the
dispute's record says the same under ``bundle``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import anyio.to_thread
import msgspec
import structlog

from domain import disputes as rules
from domain.disputes import DisputeOpened, DisputeResolved, DisputeState, EvidenceAdded, Party
from domain.kernel import Event, Rejected
from services.disputes.bundle import build_bundle, receipts_of, verify_bundle
from services.errors import ConflictError, InvalidError, NotFoundError, from_rejection, game_not_found
from services.history.cut import DisputeSealed, sealed_reason
from services.history.records import Entry
from services.store import disputes as store_disputes
from services.store.event_store import EventStore
from services.table.lifecycle import wall_clock_ms
from services.table.lru import LRU
from services.table.queries import GameQueries

ATTEMPTS = 5  # compare-and-set rounds before answering 409 dispute_busy
MAX_LISTED = 100
VERDICT_SECONDS = 30.0  # a verdict given again without re-running the game, while nothing changed
VERDICTS_KEPT = 256
BundleExtra = Callable[[str, list[Entry]], Any]
"""Sections other parts add to a bundle (keys, log proofs): ``await extra(game_id, entries)``."""

log = structlog.get_logger("tablestream.disputes")


def dispute_not_found(dispute_id: str) -> NotFoundError:
    return NotFoundError("dispute_not_found", f"There is no dispute {dispute_id!r} on this game.")


class Verdicts:
    """The verdicts given lately, one per (game, dispute, the game's head, the dispute's events):
    a verdict re-runs the whole game's rules, so the same question asked again within ``seconds``
    (a page reloaded, several people looking) gets the same answer without re-running them; a new
    event of the game or of the dispute asks anew. After ``seconds`` it is worked out again, so the
    log's proofs in it stay recent. One per API process (``AppContext.verdicts``)."""

    def __init__(
        self,
        size: int = VERDICTS_KEPT,
        seconds: float = VERDICT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._kept: LRU[tuple[str, str, int, int], tuple[float, dict[str, Any]]] = LRU(size)
        self.seconds = seconds
        self.clock = clock
        self.worked_out = 0  # verdicts worked out (not given from memory) so far

    def get(self, key: tuple[str, str, int, int]) -> dict[str, Any] | None:
        kept = self._kept.get(key)
        if kept is None or self.clock() - kept[0] >= self.seconds:
            return None
        return kept[1]

    def put(self, key: tuple[str, str, int, int], verdict: dict[str, Any]) -> None:
        self.worked_out += 1
        self._kept.put(key, (self.clock(), verdict))


class Disputes:
    def __init__(
        self,
        store: EventStore,
        queries: GameQueries,
        extra: BundleExtra | None = None,
        verdicts: Verdicts | None = None,
    ) -> None:
        self.store = store
        self.queries = queries
        self.extra = extra
        self.verdicts = verdicts if verdicts is not None else Verdicts()

    async def open(
        self, game_id: str, by: Party, round_number: int | None, text: str, seat: int | None
    ) -> dict[str, Any]:
        folded = await self.queries.load(game_id)
        state = folded.state
        played = 0 if state.status == "waiting" else folded.table.rules.current_round(state.game_state)
        try:
            rules.check_room(await self._states(game_id), by, started=played > 0)
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        for _ in range(ATTEMPTS):
            dispute_id = secrets.token_hex(8)
            at = wall_clock_ms()
            try:
                events = rules.open_dispute(
                    dispute_id, game_id, round_number, text, by, at, played, state.players, seat
                )
            except Rejected as rejected:
                raise from_rejection(rejected) from None
            if await self.store.run(store_disputes.append(game_id, dispute_id, 0, events[0], at)):
                await self.store.run(store_disputes.mark_open(game_id, dispute_id, at))
                log.info("dispute_opened", game_id=game_id, dispute_id=dispute_id, round=round_number)
                return await self.read(game_id, dispute_id)
        raise ConflictError("dispute_busy", "The dispute could not be recorded; try again.")

    async def _states(self, game_id: str) -> list[DisputeState]:
        """Every dispute of the game as it stands (at most ``rules.MAX_DISPUTES_PER_TABLE``)."""
        found = []
        for dispute_id in await self.store.run(store_disputes.of_game(game_id)):
            state = rules.fold(await self.store.run(store_disputes.read(game_id, dispute_id)))
            if state is not None:
                found.append(state)
        return found

    async def add_evidence(
        self, game_id: str, dispute_id: str, by: Party, kind: str, content: str
    ) -> dict[str, Any]:
        await self._events(game_id, dispute_id)  # an unknown dispute is a 404 whatever the evidence
        if kind == "receipts":
            try:
                receipts_of([content])
            except (ValueError, msgspec.DecodeError) as exc:
                raise InvalidError("invalid_evidence", f"Receipts evidence is not readable: {exc}.") from None
        return await self._decide(
            game_id, dispute_id, lambda state, at: rules.add_evidence(state, kind, content, by, at)
        )

    async def resolve(
        self, game_id: str, dispute_id: str, by: Party, verdict: str, reason: str
    ) -> dict[str, Any]:
        record = await self._decide(
            game_id, dispute_id, lambda state, at: rules.resolve(state, verdict, reason, by, at)
        )
        await self.store.run(store_disputes.mark_resolved(game_id, dispute_id))
        log.info("dispute_resolved", game_id=game_id, dispute_id=dispute_id, verdict=verdict)
        return record

    async def _decide(
        self, game_id: str, dispute_id: str, decide: Callable[[DisputeState, int], list[Event]]
    ) -> dict[str, Any]:
        for _ in range(ATTEMPTS):
            events = await self._events(game_id, dispute_id)
            state = rules.fold(events)
            assert state is not None
            at = wall_clock_ms()
            try:
                (event,) = decide(state, at)
            except Rejected as rejected:
                raise from_rejection(rejected) from None
            if await self.store.run(store_disputes.append(game_id, dispute_id, len(events), event, at)):
                return await self.read(game_id, dispute_id)
        raise ConflictError("dispute_busy", "The dispute changed while it was written; try again.")

    async def _events(self, game_id: str, dispute_id: str) -> list[Event]:
        if not store_disputes.DISPUTE_ID.fullmatch(dispute_id):
            raise dispute_not_found(dispute_id)
        events = await self.store.run(store_disputes.read(game_id, dispute_id))
        if not events:
            raise dispute_not_found(dispute_id)
        return events

    async def read(self, game_id: str, dispute_id: str) -> dict[str, Any]:
        """The dispute's record: what is disputed, its events, and whether its bundle is ready."""
        events = await self._events(game_id, dispute_id)
        entries = await self.store.read(game_id)
        sealed = await anyio.to_thread.run_sync(sealed_reason, entries, _round_of(events))
        return record_of(events, sealed)

    async def of_game(self, game_id: str) -> list[dict[str, Any]]:
        if await self.store.head(game_id) == 0:
            raise game_not_found(game_id)
        ids = await self.store.run(store_disputes.of_game(game_id))
        found = []
        for dispute_id in ids[-MAX_LISTED:]:
            events = await self.store.run(store_disputes.read(game_id, dispute_id))
            if events:
                found.append(summary_of(events))
        return found

    async def open_disputes(self, limit: int, after: tuple[int, str] | None = None) -> dict[str, Any]:
        """A page of open disputes of every game, oldest first, for the operator's console, and the
        cursor of the next page (``None``: the last): ``<opened ms>/<game id>/<dispute id>``."""
        found = []
        page = await self.store.run(store_disputes.open_disputes(limit + 1, after))
        for game_id, dispute_id, _ in page[:limit]:
            events = await self.store.run(store_disputes.read(game_id, dispute_id))
            if events:
                found.append(summary_of(events))
        following = None
        if len(page) > limit:
            game_id, dispute_id, at = page[limit - 1]
            following = f"{at}/{game_id}/{dispute_id}"
        return {"disputes": found, "next": following}

    async def bundle(self, game_id: str, dispute_id: str) -> dict[str, Any]:
        events = await self._events(game_id, dispute_id)
        entries = await self.store.read(game_id)
        record = record_of(events, None)
        receipts = [
            item
            for event in events
            if isinstance(event, EvidenceAdded) and event.kind == "receipts"
            for item in receipts_of([event.content])
        ]
        try:
            extra = await self.extra(game_id, entries) if self.extra is not None else None
            return await anyio.to_thread.run_sync(build_bundle, entries, record, receipts, extra)
        except DisputeSealed as sealed:
            raise ConflictError("dispute_sealed", sealed.message) from None

    async def verdict(self, game_id: str, dispute_id: str) -> dict[str, Any]:
        """The bundle's checks as the offline verifier gives them (``verify_bundle``); the same
        verdict again while neither the game nor the dispute changed, for ``Verdicts.seconds``."""
        key = (
            game_id,
            dispute_id,
            await self.store.head(game_id),
            len(await self._events(game_id, dispute_id)),
        )
        kept = self.verdicts.get(key)
        if kept is not None:
            return kept
        doc = await self.bundle(game_id, dispute_id)
        verdict: dict[str, Any] = (await anyio.to_thread.run_sync(verify_bundle, doc)).as_json()
        self.verdicts.put(key, verdict)
        return verdict


def _round_of(events: list[Event]) -> int | None:
    opened = events[0]
    assert isinstance(opened, DisputeOpened)
    return opened.round


def summary_of(events: list[Event]) -> dict[str, Any]:
    state = rules.fold(events)
    assert state is not None
    return {
        "dispute_id": state.dispute_id,
        "game_id": state.game_id,
        "round": state.round,
        "seat": state.seat,
        "text": state.text,
        "opened_by": msgspec.to_builtins(state.opened_by),
        "opened_at": state.opened_at,
        "status": "open" if state.open else "resolved",
        "verdict": state.verdict,
        "reason": state.reason,
        "evidence": state.evidence,
    }


def record_of(events: list[Event], sealed: DisputeSealed | None) -> dict[str, Any]:
    """The summary, every event as stored, and the bundle's readiness (a code and a sentence)."""
    resolution = next((e for e in reversed(events) if isinstance(e, DisputeResolved)), None)
    return {
        **summary_of(events),
        "resolved_by": msgspec.to_builtins(resolution.by) if resolution is not None else None,
        "events": [msgspec.to_builtins(event) for event in events],
        "bundle": {"ready": True}
        if sealed is None
        else {"ready": False, "code": sealed.code, "reason": sealed.reason, "message": sealed.message},
    }
