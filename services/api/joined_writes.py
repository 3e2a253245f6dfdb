"""A transport wrapper that joins the writes of one event-loop step into one socket write.

uvicorn's httptools protocol writes a response's status line and headers with one
``transport.write`` and its body with another: two send syscalls, and (``TCP_NODELAY``) two TCP
segments, for every answer. ``JoinedWrites`` stands between the protocol and the event loop's
transport: a write is kept, joined to the writes that follow it in the same step, and handed to the
real transport once, by a callback scheduled at the first write (the next turn of the loop), or
earlier when the protocol says the response is complete (``flush``). Streaming answers (server-sent
events, chunked bodies) are written in the step they are sent, so every event still leaves at once.

The real transport sees the joined bytes before anything that depends on their order or on the
buffer: ``close`` and ``write_eof`` flush first, ``abort`` drops them (as the transport's own abort
does its buffer), a join that reaches ``FLUSH_AT`` bytes is written at once (so the transport's
flow control, which pauses the protocol above its high-water mark, sees large bodies as soon as they
are written), and ``get_write_buffer_size`` counts the kept bytes too. A write to a transport that
is already closing or shut for writing, or after ``write_eof``, goes straight through: it succeeds or
fails exactly as it did without the wrapper. Everything else is the real transport's.
"""

from __future__ import annotations

import asyncio
from typing import Any

FLUSH_AT = 65536  # bytes kept at most: uvicorn's (and the loops') default high-water mark


class JoinedWrites(asyncio.Transport):
    __slots__ = ("_eof", "_flush_handle", "_kept", "_loop", "_size", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._kept: list[bytes] = []
        self._size = 0
        self._flush_handle: asyncio.Handle | None = None
        self._eof = False

    @property
    def transport(self) -> asyncio.Transport:
        """The real transport underneath."""
        return self._transport

    # -- writing ------------------------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._eof or self._transport.is_closing():
            self.flush()
            self._transport.write(data)
            return
        if not data:
            return
        if data.__class__ is not bytes:  # a buffer the caller may change after the call: copied
            data = bytes(data)
        self._kept.append(data)
        self._size += len(data)
        if self._size >= FLUSH_AT:
            self.flush()
        elif self._flush_handle is None:
            self._flush_handle = self._loop.call_soon(self._flush_later)

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def flush(self) -> None:
        """Hand the kept bytes to the real transport now, as one write."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._kept:
            return
        data = self._kept[0] if len(self._kept) == 1 else b"".join(self._kept)
        self._kept.clear()
        self._size = 0
        self._transport.write(data)

    def _flush_later(self) -> None:
        self._flush_handle = None
        self._flush_if_alive()

    def _flush_if_alive(self) -> None:
        try:
            self.flush()
        except RuntimeError:
            # the connection went away since the write (uvloop: "the handler is closed"): nothing
            # reaches the peer now, as nothing would have had the bytes gone out then
            if not self._transport.is_closing():
                raise

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def write_eof(self) -> None:
        self.flush()
        self._eof = True
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._size

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    # -- closing ------------------------------------------------------------------------------------

    def close(self) -> None:
        self._flush_if_alive()
        self._transport.close()

    def abort(self) -> None:
        self._drop()
        self._transport.abort()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def _drop(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        self._kept.clear()
        self._size = 0

    # -- the rest is the real transport's -----------------------------------------------------------

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()
