"""What the running app holds: its settings and the connected parts, built once in the lifespan."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.requests import HTTPConnection

from services.accounts.players import PlayerQueries
from services.accounts.registry import Accounts
from services.api.drain import Drain
from services.api.probes import Readiness
from services.api.rate_limits import RateLimits
from services.api.stream_slots import StreamSlots
from services.api.view_cache import ViewCache
from services.disputes.cases import Verdicts
from services.fairness.receipts import ReceiptSigner
from services.operating.config import Settings
from services.store.event_store import EventStore
from services.store.live_updates import LiveHub
from services.store.operator import QueueClient
from services.table.callers import Callers
from services.table.commands import GameCommands
from services.table.queries import GameQueries


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    store: EventStore
    callers: Callers
    commands: GameCommands
    queries: GameQueries
    accounts: Accounts
    players: PlayerQueries
    live: LiveHub
    views: ViewCache
    readiness: Readiness
    stream_slots: StreamSlots
    rate_limits: RateLimits
    drain: Drain
    queue: QueueClient | None = None  # RQ's connection (the operator's console reads queue depths)
    signer: ReceiptSigner | None = None  # signs every receipt answered (services.fairness.receipts)
    verdicts: Verdicts = field(default_factory=Verdicts)  # disputes' verdicts given lately

    @property
    def receipts(self) -> ReceiptSigner:
        assert self.signer is not None, "create_app always sets the signer"
        return self.signer


def app_context(conn: HTTPConnection) -> AppContext:
    found: AppContext = conn.app.state.context
    return found
