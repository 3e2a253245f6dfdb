"""What the running app holds: its settings and the connected parts, built once in the lifespan."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.requests import HTTPConnection

from services.accounts import Accounts
from services.api.drain import Drain
from services.api.probes import Readiness
from services.api.rate_limits import RateLimits
from services.api.stream_slots import StreamSlots
from services.api.view_cache import ViewCache
from services.callers import Callers
from services.commands import GameCommands
from services.config import Settings
from services.disputes import Verdicts
from services.players import PlayerQueries
from services.queries import GameQueries
from services.receipts import ReceiptSigner
from services.store.event_store import EventStore
from services.store.live_updates import LiveHub
from services.store.operator import QueueClient


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
    signer: ReceiptSigner | None = None  # signs every receipt answered (services.receipts)
    verdicts: Verdicts = field(default_factory=Verdicts)  # disputes' verdicts given lately

    @property
    def receipts(self) -> ReceiptSigner:
        assert self.signer is not None, "create_app always sets the signer"
        return self.signer


def app_context(conn: HTTPConnection) -> AppContext:
    found: AppContext = conn.app.state.context
    return found
