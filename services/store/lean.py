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
from collections.abc import Sequence
from typing import Any, cast

import hiredis
import redis.asyncio as aioredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

Arg = bytes | str | int | float


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


class LeanScripts:
    """``EVALSHA`` of registered scripts on one pipelined connection to ``host:port`` (see the module)."""

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
        backoff: Sequence[float] = (0.05, 0.1, 0.2, 0.4),
    ) -> None:
        self.host, self.port, self.db = host, port, db
        self.password, self.username = password, username
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._connection: _Connection | None = None
        self._connecting: asyncio.Future[_Connection] | None = None

    async def evalsha(self, sha: str, source: str, keys: Sequence[Arg], args: Sequence[Arg]) -> Any:
        """The script's reply; ``NOSCRIPT`` loads it (``source``) and calls again."""
        attempt = 0
        while True:
            try:
                connection = self._connection
                if connection is None or connection.lost is not None:
                    connection = await self._connect()
                try:
                    return await connection.call(
                        hiredis.pack_command(("EVALSHA", sha, len(keys), *keys, *args))
                    )
                except NoScriptError:
                    await connection.call(hiredis.pack_command(("SCRIPT", "LOAD", source)))
                    return await connection.call(
                        hiredis.pack_command(("EVALSHA", sha, len(keys), *keys, *args))
                    )
            except (RedisConnectionError, RedisTimeoutError, OSError):
                if attempt >= self.retries:
                    raise
                await asyncio.sleep(self.backoff[min(attempt, len(self.backoff) - 1)])  # the pool's backoff
                attempt += 1

    async def _connect(self) -> _Connection:
        """The connection, made once by whoever asks first (the others wait for it)."""
        if self._connecting is not None:
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
        hello: list[tuple[Arg, ...]] = []
        if self.password is not None:
            hello.append(("AUTH", self.username, self.password) if self.username else ("AUTH", self.password))
        if self.db:
            hello.append(("SELECT", self.db))
        for command in hello:
            await connection.call(hiredis.pack_command(command))
        return connection

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and connection.transport is not None:
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
    kwargs = pool.connection_kwargs
    if "host" not in kwargs or kwargs.get("credential_provider") is not None:
        return None
    retry = kwargs.get("retry")
    retries = getattr(retry, "_retries", 3) if retry is not None else 0
    return LeanScripts(
        kwargs["host"],
        int(kwargs.get("port", 6379)),
        db=int(kwargs.get("db", 0) or 0),
        password=kwargs.get("password"),
        username=kwargs.get("username"),
        timeout=kwargs.get("socket_timeout"),
        retries=retries,
    )
