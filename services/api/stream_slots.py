"""Caps on open live streams, per server process and per client address."""

from __future__ import annotations

from services.errors import TooManyError, UnavailableError
from services.telemetry import metrics


class Slot:
    """One live stream's place in ``StreamSlots``; released once, whatever ends the stream."""

    def __init__(self, slots: StreamSlots, client: str) -> None:
        self._slots, self._client, self._held = slots, client, True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slots.give_back(self._client)


class StreamSlots:
    """Caps on open live streams: ``total`` per server process and ``per_client`` per address."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total, self.per_client = total, per_client
        self.open = 0
        self._by_client: dict[str, int] = {}

    def take(self, client: str) -> Slot:
        held = self._by_client.get(client, 0)
        if held >= self.per_client:
            metrics.refused("live_streams")
            raise TooManyError(
                "too_many_streams",
                f"A client may hold at most {self.per_client} live streams; close one first.",
                retry_after=5,
            )
        if self.open >= self.total:
            raise UnavailableError(
                "too_many_streams", "This server holds as many live streams as it can; retry later.",
                retry_after=5,
            )  # fmt: skip
        self.open += 1
        self._by_client[client] = held + 1
        return Slot(self, client)

    def give_back(self, client: str) -> None:
        self.open -= 1
        left = self._by_client.get(client, 1) - 1
        if left > 0:
            self._by_client[client] = left
        else:
            self._by_client.pop(client, None)
