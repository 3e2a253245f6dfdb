"""Audit and export (shared/FAIRNESS.md): settle a disputed round from the recorded history."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from services.audit import Viewer, build_audit
from services.errors import ApiError
from services.export import GameNotFinished, build_export
from services.http import JSONResponse, game_id_of, identify
from services.state import services


async def get_audit(request: Request) -> JSONResponse:
    """Per finished round: the seed and its check, each chance outcome re-derived, the events; full
    detail for everyone once the game is over and for the operator (admin token) during play."""
    game_id = game_id_of(request)
    ts = services(request)
    caller = await identify(request, game_id)
    await ts.handler.load(game_id)  # 404 for an unknown game
    entries = await ts.store.read(game_id)
    viewer: Viewer = "spectator"
    if caller.role == "operator":
        viewer = "operator"
    elif caller.seat is not None:
        viewer = "player"
    return JSONResponse(build_audit(entries, viewer, caller.seat))


async def get_export(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    ts = services(request)
    await ts.handler.load(game_id)
    entries = await ts.store.read(game_id)
    try:
        return JSONResponse(build_export(entries))
    except GameNotFinished:
        raise ApiError(409, "game_not_finished", "A game can be exported once it is over.") from None


routes = [
    Route("/games/{game_id}/audit", get_audit, methods=["GET"]),
    Route("/games/{game_id}/export", get_export, methods=["GET"]),
]
