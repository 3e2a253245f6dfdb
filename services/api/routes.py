"""The routes of API.md: tables and lobby, commands, views, events, scores."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from starlette.requests import Request
from starlette.routing import Route

from domain.kernel import Event
from domain.table import Table
from projections.views import encode, scoreboard, seat_view, view_field
from services.errors import ApiError
from services.folding import Folded, decode_entries
from services.http import JSONResponse, convert, game_id_of, identify, int_query, read_json
from services.state import services

MAX_EVENTS_PAGE = 1000


class CreateGame(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    players: int
    options: dict[str, Any] = {}


class JoinGame(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    client_seed: Annotated[str, msgspec.Meta(max_length=64)] | None = None


class SendCommand(msgspec.Struct, forbid_unknown_fields=True):
    command_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    command: dict[str, Any]
    expected_version: Annotated[int, msgspec.Meta(ge=0)] | None = None


def event_json(table: Table, version: int, event: Event, seat: int | None, full: bool) -> dict[str, Any]:
    """An event as a caller may see it, with its version; ``full`` shows hidden details."""
    shown = table.redact(event, seat, finished=full)
    return {"version": version, **msgspec.to_builtins(shown)}


async def create_game(request: Request) -> JSONResponse:
    body = convert(await read_json(request), CreateGame)
    game_id, host_token = await services(request).handler.create(body.game, body.players, body.options)
    return JSONResponse({"game_id": game_id, "host_token": host_token}, status_code=201)


async def lobby(request: Request) -> JSONResponse:
    limit = int_query(request, "limit", 100, low=1, high=1000)
    entries = [msgspec.json.decode(raw) for raw in await services(request).store.lobby(limit or 100)]
    return JSONResponse({"games": [e for e in entries if e["status"] != "finished"]})


async def join_game(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    body = convert(await read_json(request), JoinGame)
    seat, token = await services(request).handler.join(game_id, body.name, body.client_seed)
    return JSONResponse({"seat": seat, "token": token}, status_code=201)


async def send_command(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    ts = services(request)
    caller = await identify(request, game_id)
    if caller.role == "spectator":
        raise ApiError(401, "unauthorized", "Commands need a seat token: 'Authorization: Bearer <token>'.")
    if caller.seat is None:
        raise ApiError(403, "not_a_player", "Only a seated player's token may send commands.")
    body = convert(await read_json(request), SendCommand)
    outcome = await ts.handler.command(
        game_id, caller.seat, body.command_id, body.command, body.expected_version
    )
    events = [event_json(outcome.table, v, e, caller.seat, outcome.finished) for v, e in outcome.events]
    return JSONResponse({"version": outcome.version, "events": events, "receipt": outcome.receipt()})


async def get_view(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    ts = services(request)
    caller = await identify(request, game_id)
    at = int_query(request, "at", None, low=1)
    if at is not None:
        folded = await _at_version(request, game_id, at)
        return JSONResponse(encode(seat_view(folded.state, folded.version, caller.seat)))
    checkpoint, data = await ts.store.read_view(game_id, view_field(caller.seat))
    required = await ts.store.seat_version(game_id, caller.seat) if caller.seat is not None else 0
    if data is None or checkpoint < required:
        # The projection lags behind this seat's own last command (or has not run yet): compute the
        # same pure view here so that a seat always reads its own writes.
        folded = await ts.handler.load(game_id)
        data = encode(seat_view(folded.state, folded.version, caller.seat))
    return JSONResponse(data)


async def get_events(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    ts = services(request)
    caller = await identify(request, game_id)
    after = int_query(request, "after", 0) or 0
    limit = int_query(request, "limit", 100, low=1, high=MAX_EVENTS_PAGE) or 100
    entries = await ts.store.read(game_id, after=after, limit=limit)
    folded = await ts.handler.load(game_id)  # after the read: its head is never behind the page
    full = folded.state.status == "finished" or caller.role == "operator"
    events = [
        event_json(folded.table, v, e, caller.seat, full) for v, e in decode_entries(folded.table, entries)
    ]
    return JSONResponse({"events": events, "version": folded.version})


async def get_scores(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    ts = services(request)
    _, data = await ts.store.read_view(game_id, "scores")
    if data is None:
        folded = await ts.handler.load(game_id)
        data = encode(scoreboard(folded.state, folded.version))
    return JSONResponse(data)


async def _at_version(request: Request, game_id: str, version: int) -> Folded:
    ts = services(request)
    head = (await ts.handler.load(game_id)).version
    if version > head:
        raise ApiError(422, "invalid_query", f"The game is at version {head}; 'at' cannot be {version}.")
    return await ts.handler.load_at(game_id, version)


routes = [
    Route("/games", create_game, methods=["POST"]),
    Route("/games", lobby, methods=["GET"]),
    Route("/games/{game_id}/players", join_game, methods=["POST"]),
    Route("/games/{game_id}/commands", send_command, methods=["POST"]),
    Route("/games/{game_id}/view", get_view, methods=["GET"]),
    Route("/games/{game_id}/events", get_events, methods=["GET"]),
    Route("/games/{game_id}/scores", get_scores, methods=["GET"]),
]
