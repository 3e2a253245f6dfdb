"""The browser client's server side: the page shell and static files, the API docs page, the table
options schema the lobby builds its form from, and the replay of a finished game.

The replay's data comes from the read side (``services.table.queries``); the token cookies and ``?lang=``
are read in ``services.api.http``. The client itself is plain HTML, CSS and JavaScript modules in
``services/api/static`` (no build step); every page is the same shell, which routes by path in the
browser. How the files and the shell are served (fingerprinted, compressed, preloaded):
``services.api.asset_routes``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import swagger_ui_bundle
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from domain.games import spec, specs
from domain.table import MAX_EXPIRE_MINUTES, MAX_TURN_SECONDS, PUBLIC_TURN_SECONDS, TableTimers
from projections.narration import LANGUAGES
from services.api.answers import ReplayIndex
from services.api.answers_history import Replay
from services.api.answers_play import Options
from services.api.asset_routes import REVALIDATE, favicon, page_response, static_file
from services.api.context import app_context
from services.api.contract import BEARER, COOKIES, Answer, Narration, Operation, errors
from services.api.http import MAX_VERSION, JSONResponse, caller_of, game_id_of, optional_int_query

# Swagger UI's files change only with the package version, which is in their path.
SWAGGER_CACHE = "public, max-age=86400"


class Assets(StaticFiles):
    """StaticFiles with a Cache-Control header on every file it serves."""

    def __init__(self, directory: Path, cache_control: str) -> None:
        super().__init__(directory=directory)
        self.cache_control = cache_control

    def file_response(
        self, full_path: Any, stat_result: Any, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = self.cache_control
        return response


# -- pages --------------------------------------------------------------------------------------


async def shell(request: Request) -> Response:
    """The page shell for this path; on a table or a replay, the game's module is preloaded too
    when this process holds the table in memory (no read for it: a page never waits on Redis)."""
    game_id = request.path_params.get("game_id")
    game = None
    context = getattr(request.app.state, "context", None)
    if game_id is not None and context is not None:
        folded = context.queries.cache.get(game_id)
        game = folded.state.game if folded is not None else None
    return page_response(request, game)


DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tablestream API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/static/js/docs.js"></script></body></html>
"""


async def docs(request: Request) -> HTMLResponse:
    return HTMLResponse(DOCS_PAGE, headers={"Cache-Control": REVALIDATE})


# -- GET /games/options ---------------------------------------------------------------------------

# The table's online options (``domain.table.TableTimers``), offered with every game's own.
COMMON_EXPLANATIONS = {
    "turn_seconds": "Seconds each player has for a move before the server plays his default move; 0: no "
    f"timer; empty: {PUBLIC_TURN_SECONDS} at a public table, none at a practice table.",
    "expire_minutes": "Minutes after which a table still waiting for players is closed.",
    "takeover_after": "Missed turns in a row after which a bot takes the seat over.",
    "turn_based": "A turn-based table: turns may last up to a week, and the table waits a day for "
    "players; the players come back when it is their turn ('Your tables').",
    "bot_pace_ms": "Milliseconds a bot waits before it moves while a person sits at the table, so that "
    "its moves can be followed; 0: at once; empty: the server's default.",
    "private": "Not listed in the lobby: only people with its invite link can see it and sit down.",
    "bot_level": "The level of a bot that takes a seat over: easy (makes slips), normal or strong "
    "(simulates the hidden cards before each move).",
}


def _option(game: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """One option as the lobby's form takes it; its bounds are the options struct's own
    (``msgspec.Meta(ge=..., le=...)`` on the field, so the JSON schema carries them)."""
    nullable = False
    kinds = schema.get("anyOf", [schema])
    base: dict[str, Any] = {}
    for kind in kinds:
        if kind.get("type") == "null":
            nullable = True
        else:
            base = kind
    values = base.get("enum")
    option: dict[str, Any] = {
        "name": name,
        "type": "choice" if values else base.get("type", "string"),
        "nullable": nullable,
        "default": schema.get("default"),
        "values": sorted(values) if values else None,
        "minimum": base.get("minimum"),
        "maximum": base.get("maximum"),
        "description": (spec(game).option_notes.get(name) if game else None)
        or COMMON_EXPLANATIONS.get(name, ""),
    }
    return option


def table_options() -> list[dict[str, Any]]:
    """The online options every table takes besides its game's (peeled off the create request)."""
    schema = msgspec.json.schema(TableTimers)
    properties = next(iter(schema["$defs"].values()))["properties"]
    options = [_option("", name, prop) for name, prop in properties.items()]
    for option in options:
        if option["name"] == "expire_minutes":  # a new table's bound; older tables may have more
            option["maximum"] = MAX_EXPIRE_MINUTES  # a turn-based one's: MAX_TURN_BASED_EXPIRE_MINUTES
        if option["name"] == "turn_seconds":  # a real-time table's; a turn-based one's is longer
            option["maximum"] = MAX_TURN_SECONDS
        if option["name"] in ("turn_seconds", "bot_pace_ms"):  # the default: practice or not; the server's
            option["nullable"], option["default"] = True, None
    return options


def options_schema() -> dict[str, Any]:
    """Per game: title, blurb, module package, score direction, player counts and every table option
    with its type, default and meaning: everything the browser client knows of a game."""
    games = []
    for game in specs():
        schema = msgspec.json.schema(game.rules.options_type)
        properties = next(iter(schema["$defs"].values()))["properties"]
        players = {"min": game.min_players, "max": game.max_players}
        if game.max_players_with_options is not None:  # Skull's "max_with_two_sets"
            players[f"max_with_{game.widening_option}"] = game.max_players_with_options
        games.append(
            {
                "game": game.name,
                "title": game.title,
                "blurb": game.blurb,
                "package": game.package,
                "lower_score_wins": game.lower_score_wins,
                "draws": dict(game.draws),
                "players": players,
                "options": [
                    *(_option(game.name, name, prop) for name, prop in properties.items()),
                    *table_options(),
                ],
            }
        )
    seed = {
        "name": "seed",
        "type": "string",
        "pattern": "^[0-9a-f]{64}$",
        "description": "Practice table: 64 hex characters used as the server's seed, so deals repeat.",
    }
    return {"games": games, "practice_seed": seed, "languages": list(LANGUAGES)}


async def game_options(request: Request) -> JSONResponse:
    return JSONResponse(options_schema())


# -- GET /games/{id}/replay ---------------------------------------------------------------------


async def get_replay(request: Request) -> JSONResponse:
    """One version of a finished game, everything revealed (``services.table.queries.GameQueries.replay``)."""
    game_id = game_id_of(request)
    at = optional_int_query(request, "at", low=1, high=MAX_VERSION)
    lang = request.query_params.get("lang")
    return JSONResponse(await app_context(request).queries.replay(game_id, at, lang))


async def get_replay_index(request: Request) -> JSONResponse:
    """Where a finished game's rounds, tricks, turns and phases begin, and every seat's moves
    (``services.table.queries.GameQueries.replay_index``); ``you`` is the seat of the caller's token or the
    browser's seat cookie, so the viewer can offer "my moves"."""
    game_id = game_id_of(request)
    caller = await caller_of(request, game_id)
    you = caller.seat if caller.role == "seat" else None
    return JSONResponse(await app_context(request).queries.replay_index(game_id, you))


class GetReplayQuery(msgspec.Struct):
    at: (
        Annotated[int, Meta(ge=1, le=MAX_VERSION, description="The version (default: the last)")] | UnsetType
    ) = UNSET
    lang: Narration | UnsetType = UNSET


operations = [
    Operation(
        "GET",
        "/games/options",
        game_options,
        answers={200: Answer("games, practice_seed, languages", Options)},
        summary=(
            "Per game: title, player counts and every table option with its meaning; the narration's "
            "languages"
        ),
    ),
    Operation(
        "GET",
        "/games/{game_id}/replay",
        get_replay,
        answers={200: Answer("version, head, spectator, seats, events", Replay)},
        summary=(
            "A finished game at one version: the spectator's and every seat's view, and that version's events"
            " in full"
        ),
        query=GetReplayQuery,
        errors=errors(404, 409, 422, s409="Game not finished", s422="Bad 'at' or 'lang'"),
    ),
    Operation(
        "GET",
        "/games/{game_id}/replay/index",
        get_replay_index,
        answers={200: Answer("game, head, players, rounds, steps, moves, you", ReplayIndex)},
        summary=(
            "A finished game's table of contents: where each round and each step (Skull King's bidding and "
            "tricks, 6 nimmt!'s draft and turns, Skull's placing, auction and challenge) begins and ends, "
            "every seat's moves, and the caller's seat"
        ),
        description=COOKIES,
        security=BEARER,
        errors=errors(401, 404, 409, s409="Game not finished"),
    ),
]


def web_routes() -> list[BaseRoute]:
    """The routes of the web client: its pages (the lobby, a table, a replay, an audit, a game's
    leaderboard at ``/rankings/<game>``, a player at ``/players/<name>``), its assets and favicon,
    the docs page. The pages' paths are not the API's (``/leaderboards/<game>`` and ``/accounts/<name>``
    answer JSON); the API's operations of the client (options and replay) are ``operations``."""
    return [
        Route("/", shell, methods=["GET"]),
        Route("/tables/{game_id}", shell, methods=["GET"]),
        Route("/replay/{game_id}", shell, methods=["GET"]),
        Route("/audit/{game_id}", shell, methods=["GET"]),
        Route("/disputes/{game_id}/{dispute_id}", shell, methods=["GET"]),
        Route("/rankings", shell, methods=["GET"]),
        Route("/rankings/{game}", shell, methods=["GET"]),
        Route("/players/{name:path}", shell, methods=["GET"]),
        Route("/rules/{game}", shell, methods=["GET"]),
        Route("/your-tables", shell, methods=["GET"]),
        Route("/docs", docs, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Route("/static/{path:path}", static_file, methods=["GET"], name="static"),
        Mount(
            "/docs/assets", Assets(Path(swagger_ui_bundle.swagger_ui_path), SWAGGER_CACHE), name="docs-assets"
        ),
    ]
