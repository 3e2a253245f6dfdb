"""uvicorn's httptools protocol writing each response once, and with a header read timeout.

``OneWriteProtocol`` gives uvicorn's protocol a ``JoinedWrites`` transport
(``services.api.joined_writes``): the status line and headers uvicorn writes at
``http.response.start`` and the body it writes at ``http.response.body`` leave in one socket write,
flushed when the response is complete; a streamed answer's parts leave in the step they are sent.
``ConfiguredProtocol`` is both, importable by name (``http="services.api.protocol:ConfiguredProtocol"``)
for the API processes uvicorn spawns (``serve --api-workers N``): it takes its header timeout from
the process's settings (``TABLESTREAM_HEADER_TIMEOUT_SECONDS``), which a spawned process inherits.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but only once a response
was sent: a connection that never finishes its request headers (slowloris) is held forever.
``HeaderTimeoutProtocol`` (one write a response too) gives every request ``header_timeout`` seconds
from its connection (or from the end of the previous response) to complete its headers, then closes
the connection. The body has its own timeout in the app (``services.api.http.read_body``).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from services.api.joined_writes import JoinedWrites
from services.operating.config import Settings

DEFAULT_HEADER_TIMEOUT = 10.0
IMPORT_NAME = "services.api.protocol:ConfiguredProtocol"


class OneWriteProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a ``JoinedWrites`` transport: one socket write a response."""

    _joined: JoinedWrites

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._joined = JoinedWrites(transport, self.loop)
        super().connection_made(self._joined)

    def on_response_complete(self) -> None:
        self._joined.flush()  # now, not at the loop's next turn
        super().on_response_complete()


class HeaderTimeoutProtocol(OneWriteProtocol):
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection gets its own header deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def with_header_timeout(seconds: float) -> type[HeaderTimeoutProtocol]:
    """The protocol class for ``uvicorn.Config(http=...)`` with this header timeout."""
    return type("HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_timeout": seconds})


@functools.cache
def _configured_header_timeout() -> float:
    return Settings.from_env().header_timeout_seconds


class ConfiguredProtocol(HeaderTimeoutProtocol):
    """The header timeout of this process's settings (read once, at its first connection)."""

    @property  # type: ignore[override]
    def header_timeout(self) -> float:
        return _configured_header_timeout()


def server_options(settings: Settings, host: str, port: int) -> dict[str, Any]:
    return {
        "host": host,
        "port": port,
        "loop": "uvloop",
        "http": with_header_timeout(settings.header_timeout_seconds),
        "log_level": "warning",
        "access_log": False,  # the app's own request log is the access log (services.api.request_log)
        "timeout_keep_alive": settings.keep_alive_seconds,
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "timeout_graceful_shutdown": max(1, round(settings.shutdown_seconds)),
        # uvicorn believes X-Forwarded-Proto/-For only from these (its default trusts 127.0.0.1, so
        # any local process could name itself any client); the app reads the client the same way
        "forwarded_allow_ips": settings.trusted_proxies,
    }
