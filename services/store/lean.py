"""A lean asyncio client for the API's hot script calls: one pipelined connection, hiredis both ways.

redis-py's asyncio client costs the API process about as much CPU per round trip as the whole of a
bare request: a pool checkout, a health check, a timeout context, a retry wrapper, a response
callback lookup and a release, around one ``EVALSHA``. The hot routes (a command's append, a view's
read) make exactly one such call each, so ``LeanScripts`` makes them on a connection of its own:

- commands are packed by ``hiredis.pack_command`` and written at once; replies are read by a
  ``hiredis.Reader`` fed from an ``asyncio.Protocol`` and handed, in order, to the futures of the
  calls waiting on this connection (Redis answers a connection's commands in order: pipelining);
- an error reply becomes redis-py's own exception (``BaseParser.parse_error``): ``NOSCRIPT`` loads
  the script and calls again, as redis-py's ``Script`` does; a script's own error is the same
  ``ResponseError`` as before;
- a connection lost or refused fails the calls waiting on it with redis-py's ``ConnectionError``,
  and one that answers none of them within ``socket_timeout`` is closed and fails them with its
  ``TimeoutError`` (one timer per connection, not one per call); either is retried, with the
  pool's backoff, as many times as redis-py's retry would (every script called here is safe to
  send again: reads, and appends deduplicated by their command id); then the error reaches the
  route, which answers 503 as for any unreachable store;
- only standalone servers, only script calls that wait for no replica (``services.store.event_store``
  decides); everything else (pipelines, the cluster, pub/sub, blocking reads) stays redis-py's.
"""

from __future__ import annotations

import asyncio
import collections
import os
import socket
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any, cast

import hiredis
import redis
import redis.asyncio as aioredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

Arg = bytes | str | int | float


def _packed(command: Sequence[Any]) -> bytes:
    """One command in RESP, packed by hiredis."""
    packed: bytes = hiredis.pack_command(tuple(command))
    return packed


_SCRIPTS: weakref.WeakKeyDictionary[object, LeanScripts] = weakref.WeakKeyDictionary()
_PIPELINES: weakref.WeakKeyDictionary[object, LeanPipelines] = weakref.WeakKeyDictionary()


class _Connection(asyncio.Protocol):
    """One connection: calls written in order, their replies taken in order."""

    def __init__(self, timeout: float | None) -> None:
        self.reader = hiredis.Reader(protocolError=InvalidResponse, replyError=BaseParser.parse_error)
        self.waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.transport: asyncio.Transport | None = None
        self.lost: Exception | None = None
        self.timeout = timeout
        self._watch: asyncio.TimerHandle | None = None
        self._answered = 0  # replies taken so far: the watchdog's sign of progress
        self.loop = asyncio.get_running_loop()  # a connection serves the loop that made it

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio's classes

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            self._answered += 1
            future = self.waiting.popleft()
            if future.done():
                continue  # its caller went away (cancelled): the reply is dropped in its turn
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = RedisConnectionError(f"Connection to Redis lost: {exc or 'closed by the server'}")
        self._fail(self.lost)

    def _fail(self, error: Exception) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(error)

    def call(self, packed: bytes) -> asyncio.Future[Any]:
        assert self.transport is not None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        self.transport.write(packed)
        if self._watch is None and self.timeout is not None:
            self._arm(self._answered)
        return future

    def _arm(self, answered: int) -> None:
        assert self.timeout is not None
        self._watch = asyncio.get_running_loop().call_later(self.timeout, self._check, answered)

    def _check(self, answered: int) -> None:
        """No reply within the timeout while calls waited: the connection is given up."""
        self._watch = None
        if not self.waiting:
            return
        if self._answered != answered:  # progress since: watch the calls still waiting
            self._arm(self._answered)
            return
        error = RedisTimeoutError("Timeout reading from Redis")
        self.lost = error
        self._fail(error)
        if self.transport is not None:
            self.transport.abort()


class _Server:
    """Where a lean connection goes and how it behaves: a plain TCP server, its database and
    credentials, the client's timeout and its retries (``_tcp_settings``)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        db: int = 0,
        password: str | None = None,
        username: str | None = None,
        timeout: float | None = None,
        retries: int = 3,
    ) -> None:
        self.host, self.port, self.db = host, port, db
        self.password, self.username = password, username
        self.timeout = timeout
        self.retries = retries

    def hello(self) -> list[tuple[Arg, ...]]:
        """What a new connection sends first: its credentials and its database."""
        hello: list[tuple[Arg, ...]] = []
        if self.password is not None:
            hello.append(("AUTH", self.username, self.password) if self.username else ("AUTH", self.password))
        if self.db:
            hello.append(("SELECT", self.db))
        return hello


class LeanScripts(_Server):
    """``EVALSHA`` of registered scripts on one pipelined connection to ``host:port`` (see the module)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        backoff: Sequence[float] = (0.05, 0.1, 0.2, 0.4),
        **settings: Any,
    ) -> None:
        super().__init__(host, port, **settings)
        self.backoff = backoff
        self._connection: _Connection | None = None
        self._connecting: asyncio.Future[_Connection] | None = None

    async def evalsha(self, sha: str, source: str, keys: Sequence[Arg], args: Sequence[Arg]) -> Any:
        """The script's reply; ``NOSCRIPT`` loads it (``source``) and calls again."""
        attempt = 0
        while True:
            try:
                connection = self._connection
                if (
                    connection is None
                    or connection.lost is not None
                    or connection.loop is not asyncio.get_running_loop()
                ):
                    connection = await self._connect()
                try:
                    return await connection.call(_packed(("EVALSHA", sha, len(keys), *keys, *args)))
                except NoScriptError:
                    await connection.call(_packed(("SCRIPT", "LOAD", source)))
                    return await connection.call(_packed(("EVALSHA", sha, len(keys), *keys, *args)))
            except (RedisConnectionError, RedisTimeoutError, OSError):
                if attempt >= self.retries:
                    raise
                await asyncio.sleep(self.backoff[min(attempt, len(self.backoff) - 1)])  # the pool's backoff
                attempt += 1

    async def _connect(self) -> _Connection:
        """The connection, made once by whoever asks first (the others wait for it)."""
        if self._connecting is not None and self._connecting.get_loop() is asyncio.get_running_loop():
            return await asyncio.shield(self._connecting)
        loop = asyncio.get_running_loop()
        self._connecting = loop.create_future()
        try:
            connection = await self._open()
        except BaseException as error:
            failed = error if isinstance(error, Exception) else RedisConnectionError(str(error))
            if not isinstance(failed, (RedisConnectionError, RedisTimeoutError)):
                failed = RedisConnectionError(
                    f"Error connecting to Redis at {self.host}:{self.port}: {error}"
                )
            self._connecting.set_exception(failed)
            self._connecting.exception()  # retrieved: nobody else may be waiting
            self._connecting = None
            raise failed from None
        self._connection = connection
        self._connecting.set_result(connection)
        self._connecting = None
        return connection

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        connect = loop.create_connection(lambda: _Connection(self.timeout), self.host, self.port)
        if self.timeout is None:
            _, connection = await connect
        else:
            _, connection = await asyncio.wait_for(connect, self.timeout)
        for command in self.hello():
            await connection.call(_packed(command))
        return connection

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        here = connection is not None and connection.loop is asyncio.get_running_loop()
        if here and connection is not None and connection.transport is not None:
            connection.transport.close()


def lean_scripts(client: object) -> LeanScripts | None:
    """A ``LeanScripts`` to the server of ``client`` when it is redis-py's asyncio client of one
    standalone server over plain TCP (the connection's own settings: database, credentials, timeout,
    retries); ``None`` for anything else (a cluster, TLS, a unix socket, fakeredis), whose script
    calls stay the client's."""
    if type(client) is not aioredis.Redis:
        return None
    pool = client.connection_pool
    if not issubclass(pool.connection_class, aioredis.Connection) or issubclass(
        pool.connection_class, (aioredis.SSLConnection, aioredis.UnixDomainSocketConnection)
    ):
        return None
    kwargs = _tcp_settings(pool.connection_kwargs)
    if kwargs is None:
        return None
    held = _SCRIPTS.get(client)
    if held is None:  # one per client: stores made per job share the job's client (and its loop)
        held = _SCRIPTS[client] = LeanScripts(**kwargs)
    return held


class LeanPipelines(_Server):
    """Pipelines of a synchronous worker thread on a lean connection: the commands packed by hiredis
    and sent in one write, their replies read by a ``hiredis.Reader``, each reply or error in its
    place (``services.store.event_store``'s rounds: a projection batch's two round trips). One
    blocking socket per thread (a worker process's loops each run in a thread of their own), with
    the client's timeout; a lost connection is made again and the pipeline sent again, as many times
    as the client's retry would (a round's commands are safe to send again: reads, and writes that
    compare and set)."""

    def __init__(self, host: str, port: int, **settings: Any) -> None:
        super().__init__(host, port, **settings)
        self._local = threading.local()

    def execute(self, commands: Sequence[Sequence[Arg]]) -> list[Any]:
        """Each command's reply, or the error it met, in its place (``raise_on_error=False``); the
        error of the whole (a connection lost for good) raised."""
        packed = b"".join(_packed(args) for args in commands)
        attempt = 0
        while True:
            try:
                return self._round(packed, len(commands))
            except (RedisConnectionError, RedisTimeoutError, OSError) as error:
                self._drop()
                if attempt >= self.retries:
                    if isinstance(error, (RedisConnectionError, RedisTimeoutError)):
                        raise
                    raise RedisConnectionError(
                        f"Error talking to Redis at {self.host}:{self.port}: {error}"
                    ) from error
                time.sleep(0.05 * 2**attempt)  # the pool's backoff, between attempts
                attempt += 1

    def _round(self, packed: bytes, count: int) -> list[Any]:
        sock, reader = self._connection()
        try:
            sock.sendall(packed)
            replies: list[Any] = []
            while len(replies) < count:
                reply = reader.gets()
                if reply is False:
                    data = sock.recv(65536)
                    if not data:
                        raise RedisConnectionError("Connection closed by the server.")
                    reader.feed(data)
                    continue
                replies.append(reply)
            return replies
        except TimeoutError as error:
            raise RedisTimeoutError("Timeout reading from Redis") from error

    def _connection(self) -> tuple[socket.socket, Any]:
        held = getattr(self._local, "held", None)
        if held is not None and held[2] == os.getpid():  # a forked child makes its own
            return held[0], held[1]
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = hiredis.Reader(protocolError=InvalidResponse, replyError=BaseParser.parse_error)
        self._local.held = (sock, reader, os.getpid())
        hello = self.hello()
        for reply in self._round(b"".join(_packed(command) for command in hello), len(hello)):
            if isinstance(reply, Exception):
                self._drop()
                raise reply
        return sock, reader

    def _drop(self) -> None:
        held = getattr(self._local, "held", None)
        self._local.held = None
        if held is not None and held[2] == os.getpid():  # never a socket the parent still uses
            held[0].close()


def lean_pipelines(client: object) -> LeanPipelines | None:
    """A ``LeanPipelines`` to the server of ``client`` when it is redis-py's synchronous client of one
    standalone server over plain TCP; ``None`` for anything else (a cluster, TLS, a unix socket,
    fakeredis), whose pipelines stay the client's."""
    if type(client) is not redis.Redis:
        return None
    pool = client.connection_pool
    if pool.connection_class is not redis.Connection:
        return None
    kwargs = _tcp_settings(pool.connection_kwargs)
    if kwargs is None:
        return None
    held = _PIPELINES.get(client)
    if held is None:  # one per client: stores made per job share the job's client
        held = _PIPELINES[client] = LeanPipelines(**kwargs)
    return held


def _tcp_settings(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The settings of a plain TCP connection's keyword arguments (``None``: not one)."""
    if "host" not in kwargs or kwargs.get("credential_provider") is not None:
        return None
    retry = kwargs.get("retry")
    return {
        "host": kwargs["host"],
        "port": int(kwargs.get("port", 6379)),
        "db": int(kwargs.get("db", 0) or 0),
        "password": kwargs.get("password"),
        "username": kwargs.get("username"),
        "timeout": kwargs.get("socket_timeout"),
        "retries": getattr(retry, "_retries", 3) if retry is not None else 0,
    }
