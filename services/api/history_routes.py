"""Audit and export (shared/FAIRNESS.md): settle a disputed round from the recorded history."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from services.api.context import app_context
from services.api.http import JSONResponse, caller_of, game_id_of


async def get_audit(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    caller = await caller_of(request, game_id)
    return JSONResponse(await app_context(request).queries.audit(game_id, caller))


async def get_export(request: Request) -> JSONResponse:
    return JSONResponse(await app_context(request).queries.export(game_id_of(request)))


routes = [
    Route("/games/{game_id}/audit", get_audit, methods=["GET"]),
    Route("/games/{game_id}/export", get_export, methods=["GET"]),
]
