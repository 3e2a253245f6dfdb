"""Commands answered ahead of every layer of the app, and the one answer a command gets.

``POST /games/{id}/commands`` is the service's one hot write. The route (``services.api.routes``)
takes it through the request log, the private tables' gate, the cross-site guard, the drain's cancel
scope, Starlette's router and ``read_body``'s cancel scope; ``command_lane`` answers it from
``services.api.lanes`` instead, doing what those layers do for it and nothing more:

- it takes only what it can answer without I/O before the command: a public table this process
  already knows (``Invitations.known_public``), a caller known from memory (a remembered token, in
  the ``Authorization`` header or a browser's seat cookie, verified by the append itself), a body
  declared JSON of at most ``MAX_BODY`` bytes, no ``Origin`` of another site
  (``RequestGuard.refusal``), the app started and not draining, tracing off; anything else is
  passed on to the app untouched (a body already read is handed on as it came);
- the body is read within the body timeout and decoded by ``read_body``'s own rules; one the route
  would refuse is passed on with its bytes, for the route to refuse in its own words;
- from the rate limit's hit on, the lane answers whatever happens: the command's answer, or the
  error the app's handlers would give (``services.api.error_responses``), with the security headers,
  the request id, the request metrics and the request log's line (a success at ``debug``);
- the drain bounds it without a cancel scope (``Drain.lane``: cancelled at the requests' deadline,
  answered 503 ``shutting_down`` if nothing was sent).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import msgspec
import structlog
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from services.api.bodies import SendCommand
from services.api.context import AppContext
from services.api.error_responses import EXCEPTION_HANDLERS, Handler, error_body
from services.api.http import MAX_BODY, bearer, client_address, decode_body, remembered_tokens
from services.api.middleware import RequestGuard
from services.api.raw_responses import send_json
from services.api.request_log import COMMAND_ROUTE, RequestLog, bind_request, plain_request_id
from services.errors import AppError, UnauthorizedError
from services.table.callers import Caller, TokenChanged
from services.table.queries import shown_event
from services.telemetry import metrics

log = structlog.get_logger("tablestream.http")

SHUTTING_DOWN = "This server is shutting down; send the request again."
Headers: TypeAlias = Sequence[tuple[bytes, bytes]]
_encoder = msgspec.json.Encoder()


def _encode(content: object) -> bytes:
    """JSON as the app's ``JSONResponse`` writes it."""
    return _encoder.encode(content)


async def command_answer(context: AppContext, game_id: str, caller: Caller, body: SendCommand) -> bytes:
    """The answer to a command (the route's and the lane's): the accepted version, the events as the
    caller's seat may see them, and the signed receipt. ``TokenChanged``: the caller was assumed
    from memory and its token no longer holds that seat (nothing was written)."""
    seat = caller.acting_seat()
    outcome = await context.commands.command(
        game_id, seat, body.command_id, body.command, body.expected_version, caller.check
    )
    events = [shown_event(outcome.table, v, e, seat, outcome.finished) for v, e in outcome.events]
    receipt = await context.receipts.sign(outcome.receipt())
    return _encode({"version": outcome.version, "events": events, "receipt": receipt})


def _handler(exc: Exception) -> Handler:
    for kind in type(exc).__mro__:
        handler = EXCEPTION_HANDLERS.get(kind)
        if handler is not None:
            return handler
    return EXCEPTION_HANDLERS[Exception]


def _replayed(body: bytes, more: bool, receive: Receive) -> Receive:
    """``receive`` with what the lane already read of the body given first."""
    given = False

    async def again() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return again


@dataclass
class _Exchange:
    """One request the lane answers: its ``send``, its start, and whether its answer went out."""

    request: Request
    send: Send
    started: float
    answered: bool = False


class CommandLane:
    """Answers a command ahead of the app when it can (see the module docstring). ``__call__``
    returns ``None`` when it answered, else the ``receive`` the app must read the body from."""

    def __init__(self, guard: RequestGuard, headers: Callable[[Scope], Headers]) -> None:
        self.guard = guard
        self.headers = headers

    async def __call__(
        self, context: AppContext, game_id: str, scope: Scope, receive: Receive, send: Send
    ) -> Receive | None:
        length = -1
        json_body = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = int(value) if value.isdigit() else -1
            elif name == b"content-type":
                json_body = value.split(b";", 1)[0].strip().lower() == b"application/json"
            elif name == b"transfer-encoding":
                return receive
        if not json_body or not 0 < length <= MAX_BODY or self.guard.refusal(scope) is not None:
            return receive
        request = Request(scope)
        try:
            token = bearer(request)
        except UnauthorizedError:
            return receive
        remembered = remembered_tokens(request, game_id) if token is None else []  # a browser's cookies
        caller = context.callers.known(game_id, token, remembered)
        if caller is None or caller.seat is None:
            return receive
        exchange = _Exchange(request, send, time.perf_counter())
        with context.drain.lane():
            try:
                return await self._answer(context, game_id, caller, (token, remembered), exchange, receive)
            except asyncio.CancelledError:
                if not context.drain.was_cut():
                    raise
                log.warning("request_cut_by_drain", path=scope["path"], response_started=exchange.answered)
                if not exchange.answered:
                    body = _encode(error_body("shutting_down", SHUTTING_DOWN))
                    await self._send(exchange, 503, body, ((b"retry-after", b"1"),))
                return None

    async def _answer(
        self,
        context: AppContext,
        game_id: str,
        caller: Caller,
        tokens: tuple[str | None, list[str]],
        exchange: _Exchange,
        receive: Receive,
    ) -> Receive | None:
        read = b""
        try:
            async with asyncio.timeout(context.settings.body_timeout_seconds):
                more = True
                while more:
                    message = await receive()
                    if message["type"] != "http.request":  # the client went away: the app meets it
                        return _replayed(read, True, _disconnected(message))
                    read += message.get("body", b"")
                    more = message.get("more_body", False)
                    if len(read) > MAX_BODY:
                        return _replayed(read, more, receive)
        except TimeoutError:
            return _replayed(read, True, receive)  # the app waits out the rest and answers 408
        try:
            body = decode_body(read, SendCommand)
        except AppError:
            return _replayed(read, False, receive)  # the route refuses it in its own words
        request = exchange.request
        bind_request(request.scope, plain_request_id(request.scope))  # the line this request logs
        try:
            await context.rate_limits.hit("command", client_address(request))
            try:
                answer = await command_answer(context, game_id, caller, body)
            except TokenChanged as changed:  # as ``http.identified``: identified afresh, then again
                context.callers.forget(changed.check)
                token, remembered = tokens
                if token is not None:
                    caller = await context.callers.identify(game_id, token)
                else:
                    caller = await context.callers.remembered(game_id, remembered)
                answer = await command_answer(context, game_id, caller, body)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            response = await _handler(exc)(request, exc)
            skipped = {b"content-type", b"content-length"}
            extra = [(name, value) for name, value in response.raw_headers if name not in skipped]
            await self._send(exchange, response.status_code, bytes(response.body), extra)
            return None
        await self._send(exchange, 200, answer)
        return None

    async def _send(self, exchange: _Exchange, status: int, body: bytes, extra: Headers = ()) -> None:
        scope = exchange.request.scope
        exchange.answered = True
        metrics.request(COMMAND_ROUTE, "POST", status, time.perf_counter() - exchange.started)
        await send_json(scope, exchange.send, status, body, (*self.headers(scope), *extra))
        RequestLog.log(scope, status, exchange.started, None)


def _disconnected(message: Message) -> Receive:
    async def again() -> Message:
        return message

    return again
