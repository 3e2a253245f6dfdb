"""The quick play matcher's loop: a thread of the worker process, next to the sweeper and the timer
loop (``workers.pool``), so ``tablestream serve`` and a deployed worker both run it.

Every ``interval`` seconds it takes (or renews) the matcher's lease in Redis, so that of several
worker processes one matches at a time, and runs one ``services.people.quickplay.Matcher`` pass: a lease
that its holder stops renewing (killed) lapses after ``LEASE_MS`` and another process, or the
restarted one, takes over and finishes what was claimed (all state is in Redis). The write side runs
in the thread's own event loop on its own async clients, as the lifecycle's jobs do
(``workers.lifecycle.commands_for``).
"""

from __future__ import annotations

import asyncio
import secrets
import threading

import redis
import structlog

from services.people.quickplay import Matcher, Pass
from services.store import quickplay as store_ops
from services.store.event_store import EventStore
from services.table.lifecycle import Clock, wall_clock_ms
from workers.lifecycle import async_client_for, commands_for
from workers.stores import async_store_clients

LEASE_MS = 5000


class LeaseLost(Exception):
    """This matcher no longer holds the lease: its pass stops."""


log = structlog.get_logger("tablestream.quickplay")


class QuickplayLoop(threading.Thread):
    """Runs the matcher every ``interval`` seconds until ``stop()``."""

    def __init__(self, connection: redis.Redis, interval: float = 0.5, now: Clock = wall_clock_ms) -> None:
        super().__init__(name="tablestream-quickplay", daemon=True)
        self._connection, self._interval, self._now = connection, interval, now
        self._stopped = threading.Event()
        self.holder = secrets.token_hex(8)
        self.passes = 0

    def run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        own = async_store_clients(self._connection)
        aclient, index = own if own is not None else (async_client_for(self._connection), None)
        commands = commands_for(aclient, self._connection, self._now, index)
        matcher = Matcher(commands, self._now, guard=lambda: self._renew(commands.store))
        try:
            while not self._stopped.is_set():
                try:
                    await self.step(matcher)
                except LeaseLost:
                    log.warning("quickplay_lease_lost")
                except Exception:  # a flaky connection must not kill the loop; the next pass retries
                    log.exception("quickplay_pass_failed")
                await asyncio.to_thread(self._stopped.wait, self._interval)
        finally:
            await commands.store.aclose_nodes()
            for client in {id(c): c for c in (aclient, index) if c is not None}.values():
                await client.aclose()

    async def step(self, matcher: Matcher) -> Pass | None:
        """One pass if this process holds the lease (``None``: another matcher does)."""
        if not await matcher.store.run(store_ops.take_lease(self.holder, LEASE_MS)):
            return None
        done = await matcher.run_pass()
        self.passes += 1
        return done

    async def _renew(self, store: EventStore) -> None:
        """Before each write of a pass: keep the lease, or stop the pass (another matcher has it,
        this one having stalled past ``LEASE_MS``); what it claimed is finished by the holder."""
        if not await store.run(store_ops.take_lease(self.holder, LEASE_MS)):
            raise LeaseLost("another matcher holds the lease")

    def stop(self) -> None:
        self._stopped.set()
