"""``/openapi.json``: OpenAPI 3.1, with request bodies and every game's commands as msgspec schemas."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

import msgspec

from domain.games import game_names, table_for
from projections.narration import LANGUAGES
from projections.ratings import DISPLAY_BASE, DISPLAY_SCALE, PROVISIONAL_GAMES, PROVISIONAL_OPPONENTS
from services.api.account_routes import MAX_PAGE as MAX_ACCOUNT_PAGE
from services.api.bodies import (
    CreateGame,
    Empty,
    FillBots,
    JoinGame,
    Login,
    Register,
    SendCommand,
    SetPassword,
)
from services.api.http import MAX_VERSION
from services.api.idempotency import MAX_KEY, MIN_KEY
from services.api.openapi_bodies import quickplay_schema, tighten
from services.api.openapi_chat import CHAT_PATHS_RATE_LIMITED, chat_paths, chat_schemas
from services.api.openapi_disputes import DISPUTE_PATHS, DISPUTE_PATHS_RATE_LIMITED, dispute_components
from services.api.openapi_hints import HINTS_RATE_LIMITED, hint_paths
from services.api.openapi_invite import add_invite_parameter, invite_paths
from services.api.openapi_live import game_stream, live_schemas, lobby_stream
from services.api.openapi_log import log_paths, log_schemas
from services.api.openapi_operator import OPERATOR_PATHS, operator_components
from services.api.openapi_your_tables import your_tables_paths
from services.api.routes import MAX_EVENTS_PAGE, MAX_LOBBY_PAGE
from services.table.commands import RESERVED_PREFIXES

REF = "#/components/schemas/{name}"


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": REF.format(name="Error")}}},
    }


def _ok(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    content = {"application/json": {"schema": schema or {"type": "object"}}}
    return {"description": description, "content": content}


RECEIPT = {
    "type": "object",
    "description": "A signed receipt (docs/fairness.md, 'Signed receipts'): the signature is Ed25519 over "
    "'tablestream-receipt-v1\\n<key_id>\\n<game_id>\\n<version>\\n<hash>\\n<signed_at>\\n', "
    "standard base64; verify it with the key of that id from /.well-known/tablestream-keys",
    "required": ["game_id", "version", "hash", "key_id", "signed_at", "signature"],
    "properties": {
        "game_id": {"type": "string"},
        "version": {"type": "integer", "minimum": 1},
        "hash": {
            "type": "string",
            "pattern": "^[0-9a-f]{64}$",
            "description": "The chain hash at that version",
        },
        "key_id": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
        "signed_at": {"type": "integer", "description": "Unix seconds; within the key's validity period"},
        "signature": {"type": "string", "format": "byte"},
    },
}
SIGNING_KEYS = {
    "type": "object",
    "required": ["algorithm", "current", "keys"],
    "properties": {
        "algorithm": {"type": "string", "enum": ["Ed25519"]},
        "current": {"type": "string", "description": "The key id that signs now"},
        "keys": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key_id", "algorithm", "public_key", "not_before", "not_after", "name", "vkey"],
                "properties": {
                    "key_id": {
                        "type": "string",
                        "description": "SHA-256 of the raw public key, first 8 bytes in hex",
                    },
                    "algorithm": {"type": "string", "enum": ["Ed25519"]},
                    "public_key": {"type": "string", "format": "byte", "description": "Raw 32 bytes, base64"},
                    "not_before": {"type": "integer", "description": "Unix seconds, included"},
                    "not_after": {
                        "type": ["integer", "null"],
                        "description": "Unix seconds, excluded; null while the key is current",
                    },
                    "name": {"type": "string", "description": "The key's name in C2SP signed notes"},
                    "vkey": {"type": "string", "description": "C2SP signed-note verifier key"},
                },
            },
        },
    },
}


def _body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": REF.format(name=name)}}}}


GAME_ID = {
    "name": "game_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
}
BEARER: list[dict[str, list[str]]] = [{"bearer": []}, {}]
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": msgspec.json.schema(
        Annotated[str, msgspec.Meta(min_length=MIN_KEY, max_length=MAX_KEY, pattern="^[!-~]+$")]
    ),
    "description": "A secret of the client (16-128 visible ASCII characters): the same key and body "
    "within 24 hours answer with the same table and host token, creating nothing.",
}
JOIN_IDEMPOTENCY_KEY = IDEMPOTENCY_KEY | {
    "description": "A secret of the client (16-128 visible ASCII characters): the same key and body "
    "within 24 hours answer with the same seat and token (also after a 503 not_replicated), seating "
    "nobody again; another body: 409 idempotency_key_reused; while a request with the key runs: 409 "
    "idempotency_key_in_use.",
}
BODY_ERRORS = (400, 413, 415, 422)  # what any route with a JSON body may answer
ERRORS = {
    400: "Malformed JSON",
    401: "A bad or malformed token",
    403: "A token that may not do this",
    404: "No such game",
    409: "A conflict with the table's state",
    413: "The request body is too large",
    415: "The body is not declared 'Content-Type: application/json' (unsupported_media_type)",
    422: "Invalid input or a rule violation",
}


def _errors(*statuses: int, **descriptions: str) -> dict[str, Any]:
    """Error answers (each the JSON error shape); ``descriptions`` override by status, e.g. s409=..."""
    return {str(s): _error(descriptions.get(f"s{s}", ERRORS[s])) for s in statuses}


def _query(name: str, description: str, minimum: int, maximum: int) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": {"type": "integer", "minimum": minimum, "maximum": maximum},
        "description": description,
    }


LANG = {
    "name": "lang",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "enum": list(LANGUAGES)},
    "description": "Add each event's sentence in this language under 'text' (saying what the caller sees)",
}
COOKIES = (
    "Without the header, a browser's 'ts_seat_<game_id>' cookie (else its 'ts_host_<game_id>' cookie) "
    "identifies it; creating and joining set these HttpOnly cookies."
)


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": list(properties), "properties": properties}


_INT = {"type": "integer", "minimum": 0}
_SPAN = {"start": {"type": "integer", "minimum": 1}, "end": {"type": "integer", "minimum": 1}}
REPLAY_INDEX = _object(
    game={"type": "string"},
    head={"type": "integer", "minimum": 1},
    players={"type": "array", "items": _object(seat=_INT, name={"type": "string"})},
    rounds={"type": "array", "items": _object(round=_INT, **_SPAN)},
    steps={
        "type": "array",
        "items": _object(round=_INT, kind={"type": "string"}, n={"type": "integer", "minimum": 1}, **_SPAN),
    },
    moves={
        "type": "array",
        "items": _object(
            version={"type": "integer", "minimum": 1},
            seat=_INT,
            by={"type": "string", "enum": ["player", "bot", "timeout"]},
        ),
    },
    you={"anyOf": [_INT, {"type": "null"}]},
)
"""``GET /games/{id}/replay/index`` (``services.history.replay_index``)."""

ACCOUNT: dict[str, Any] = {"security": [{"bearer": []}, {"account_cookie": []}]}
BROWSER_COOKIE = (
    "With 'cookie': true (browsers) the token is not in the body: the answer sets it as the HttpOnly, "
    "SameSite=Strict cookie 'ts_account' (Max-Age 180 days), which /accounts/me, "
    "/accounts/me/password, /accounts/logout and joining a table accept without a header."
)
LOGIN_LIMITS = (
    "Limited per client address and per account name (429 'rate_limited' or 'login_throttled' with "
    "Retry-After); 503 'password_check_busy' when too many passwords are being checked at once."
)
RATING_FIELDS = (
    "Every rating is {rating, mu, sigma, games, display, provisional}: 'rating' is the ordinal "
    "mu - 3 sigma that leaderboards sort by (0 for a new player, below 0 after one loss); 'display' "
    f"is the number to show people, max(0, round({DISPLAY_BASE} + {DISPLAY_SCALE} * rating)), in the "
    f"same order; 'provisional' is true until {PROVISIONAL_GAMES} rated games in that game against "
    f"{PROVISIONAL_OPPONENTS} distinct established opponents."
)
PAGE = [
    _query("offset", "Skip this many", 0, MAX_VERSION),
    _query("limit", "At most this many (default 20)", 1, MAX_ACCOUNT_PAGE),
]
ACCOUNT_PATHS: dict[str, Any] = {
    "/accounts": {
        "post": {
            "summary": "Register a display name (unique up to case, width and lookalike characters)",
            "description": BROWSER_COOKIE,
            "requestBody": _body("Register"),
            "responses": {
                "201": _ok("account_id, name and the account token (not with 'cookie': true)"),
                **_errors(
                    *BODY_ERRORS,
                    409,
                    s409="name_taken",
                    s422="invalid_name, name_confusable (its 'like' names the registered name), "
                    "name_mixed_script, invalid_password",
                ),
            },
        }
    },
    "/accounts/login": {
        "post": {
            "summary": "A fresh account token for a name and its password",
            "description": BROWSER_COOKIE + " " + LOGIN_LIMITS,
            "requestBody": _body("Login"),
            "responses": {
                "200": _ok("account_id, name and a new token (not with 'cookie': true)"),
                **_errors(*BODY_ERRORS, 401, s401="invalid_credentials"),
            },
        }
    },
    "/accounts/logout": {
        "post": {
            **ACCOUNT,
            "summary": "Revoke the caller's account token (its other tokens keep working)",
            "description": "By the bearer header, else the 'ts_account' cookie, which the answer "
            "clears; a cookie whose token no longer works is only cleared (200 {'logged_out': true}).",
            "requestBody": _body("Empty"),
            "responses": {
                "200": _ok("account_id, name, logged_out"),
                **_errors(*BODY_ERRORS, 401, s401="No account token, or a bad bearer token"),
            },
        }
    },
    "/accounts/me": {
        "get": {
            **ACCOUNT,
            "summary": "The token's account: public profile, ratings, has_password",
            "description": RATING_FIELDS,
            "responses": {"200": _ok("The account"), "401": _error("Bad or missing account token")},
        }
    },
    "/accounts/me/password": {
        "post": {
            **ACCOUNT,
            "summary": "Set or change the password (Argon2id-hashed; enables /accounts/login)",
            "description": "An account that has a password must send it as 'current_password' (checked "
            "within the login limits). Every other token of the account is revoked; the caller's keeps "
            "working.",
            "requestBody": _body("SetPassword"),
            "responses": {
                "200": _ok("Done"),
                **_errors(
                    *BODY_ERRORS,
                    401,
                    403,
                    s401="Bad account token",
                    s403="wrong_current_password",
                    s422="invalid_password, current_password_required",
                ),
            },
        }
    },
    "/accounts/{name_or_id}": {
        "parameters": [{"name": "name_or_id", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": {
            "summary": "A public profile: account id, display name, rating per game",
            "description": RATING_FIELDS,
            "responses": {"200": _ok("The profile"), "404": _error("account_not_found")},
        },
    },
    "/accounts/{account_id}/history": {
        "parameters": [{"name": "account_id", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": {
            "summary": "Finished games of an account, newest first: seats, result, rating change, links",
            "description": RATING_FIELDS,
            "parameters": PAGE,
            "responses": {
                "200": _ok("total, offset, limit, games"),
                **_errors(404, 422, s404="account_not_found"),
            },
        },
    },
    "/leaderboards/{game}": {
        "parameters": [{"name": "game", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": {
            "summary": "Established rated accounts of a game, best first (rating = mu - 3 sigma)",
            "description": RATING_FIELDS + " Provisional players are not listed: "
            "'provisional_hidden' counts them.",
            "parameters": PAGE,
            "responses": {
                "200": _ok("total (listed), offset, limit, entries, provisional_hidden"),
                **_errors(404, 422, s404="unknown_game"),
            },
        },
    },
}


TICKET = {
    "name": "ticket",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
}
QUICKPLAY_TICKET = (
    "The ticket's token as 'Authorization: Bearer <ticket_token>', else the browser's HttpOnly "
    "'ts_quickplay' cookie set by POST /quickplay. A ticket reads as {ticket, state (queued, "
    "matched, seated, timed_out), game, players, bots_after_wait, waited_ms, wait_bound_seconds, "
    "max_wait_seconds, position (while queued), game_id and seat (once seated), token (the seat's, "
    "in the first answer that shows it seated only; the answer also sets the seat cookie)}."
)
QUICKPLAY_PATHS: dict[str, Any] = {
    "/quickplay": {
        "post": {
            "summary": "Play now: queue for a table of this game and player count",
            "description": "With an account token (header or 'ts_account' cookie) the ticket carries "
            "the account and its rating (seated as the account's seat). A browser holding a live "
            "ticket (its 'ts_quickplay' cookie) gets the same ticket again (200); an account with a "
            "live ticket elsewhere, or a browser queued for another game, is 409 already_queued. "
            + QUICKPLAY_TICKET,
            "security": [{"bearer": []}, {"account_cookie": []}, {}],
            "requestBody": _body("QuickPlayRequest"),
            "responses": {
                "201": _ok("The new ticket, its state and its ticket_token"),
                "200": _ok("The browser's live ticket, answered again"),
                **_errors(
                    *BODY_ERRORS,
                    401,
                    409,
                    s401="Bad account token (header or cookie)",
                    s409="already_queued (the live ticket's id is in 'ticket')",
                    s422="unknown_game, bad_player_count, invalid_name, name_not_yours",
                ),
            },
        }
    },
    "/quickplay/{ticket}": {
        "parameters": [TICKET],
        "get": {
            "summary": "The ticket's state; with 'wait' a long-poll",
            "description": QUICKPLAY_TICKET,
            "security": [{"bearer": []}, {"quickplay_cookie": []}],
            "parameters": [
                {
                    "name": "wait",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 0, "maximum": 25},
                    "description": "Seconds to hold the answer while the ticket waits (default 0)",
                }
            ],
            "responses": {
                "200": _ok("The ticket"),
                **_errors(401, 404, 422, s401="No ticket token", s404="ticket_not_found"),
            },
        },
        "delete": {
            "summary": "Cancel a queued ticket: nothing of it is left",
            "security": [{"bearer": []}, {"quickplay_cookie": []}],
            "responses": {
                "200": _ok("{ticket, state: cancelled}"),
                **_errors(
                    401,
                    403,
                    404,
                    409,
                    s401="No ticket token",
                    s403="A browser's request from a page of another site (cross_origin)",
                    s404="ticket_not_found",
                    s409="already_matched: the table is being set (or is set)",
                ),
            },
        },
    },
    "/quickplay/{ticket}/bots": {
        "parameters": [TICKET],
        "post": {
            "summary": "Agree to bots filling the table once the wait bound has passed",
            "security": [{"bearer": []}, {"quickplay_cookie": []}],
            "requestBody": _body("Empty"),
            "responses": {
                "200": _ok("The ticket"),
                **_errors(*BODY_ERRORS, 401, 404, s401="No ticket token", s404="ticket_not_found"),
            },
        },
    },
}


RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}
}
RATE_LIMITED = {
    ("/games", "post"),
    ("/games/{game_id}/players", "post"),
    ("/games/{game_id}/commands", "post"),
    ("/accounts", "post"),
    ("/accounts/login", "post"),
    ("/accounts/me/password", "post"),
    *CHAT_PATHS_RATE_LIMITED,
    *DISPUTE_PATHS_RATE_LIMITED,
    *HINTS_RATE_LIMITED,
    ("/me/tables/{game_id}/seat", "post"),
    ("/quickplay", "post"),
    ("/log/cosignatures", "post"),
}
CAPPED = {("/games/{game_id}/live", "get"), ("/lobby/live", "get"), ("/me/live", "get")}


NOT_READY: dict[str, Any] = {
    "type": "object",
    "required": ["status", "reason", "message"],
    "properties": {
        "status": {"const": "not_ready"},
        "reason": {"enum": ["shutting_down", "redis_unreachable"]},
        "message": {"type": "string"},
    },
}
"""The body of a 503 from ``/healthz`` (``services.api.app.not_ready``), not the error shape."""


def _retry_later(description: str) -> dict[str, Any]:
    return {**_error(description), "headers": RETRY_AFTER}


def _add_refusals(paths: dict[str, Any]) -> None:
    """The answers of hardening (README's Settings) every operation may give: 503 when Redis is
    unreachable or the server drains, 429 past a client's rate or stream cap, 408 when a body
    arrives too slowly."""
    for path, item in paths.items():
        for method, operation in item.items():
            if method not in {"get", "post"} or path in {"/healthz", "/livez", "/openapi.json"}:
                continue
            responses = operation["responses"]
            unavailable = "Redis unreachable, a server-wide cap reached, or the server shutting down"
            responses.setdefault("503", _retry_later(unavailable))
            if method == "post":  # services.api.middleware.RequestGuard
                responses.setdefault(
                    "403", _error("A browser's request from a page of another site (cross_origin)")
                )
            if (path, method) in RATE_LIMITED:
                responses.setdefault("429", _retry_later("Rate limited: too many from this client"))
                responses.setdefault("408", _error("The request body did not arrive in time"))
            if (path, method) in CAPPED:
                responses.setdefault("429", _retry_later("Too many live streams from this client"))


@cache
def openapi_document() -> dict[str, Any]:
    command_unions = {table_for(name).command_type for name in game_names()}
    (create, join, send, empty, *commands), components = msgspec.json.schema_components(
        [CreateGame, JoinGame, SendCommand, Empty, FillBots, Register, Login, SetPassword, *command_unions],
        ref_template=REF,
    )
    options_text = (
        "The game's options, plus the table's: 'seed' (a practice table), 'turn_seconds' (0 = no "
        "turn timer; default 0 for practice tables, 60 otherwise), 'expire_minutes' (a waiting "
        "table expires after this, default 30, at most 60), 'takeover_after' (timeouts in a row before a bot "
        "takes the seat, default 3), 'bot_pace_ms' (0-5000: how long a bot waits before it acts while "
        "a person sits at the table, so that its moves can be followed; 0 = at once; default: the "
        "server's TABLESTREAM_BOT_PACE_MS, 1000), 'turn_based' (true: turns up to 604800 s, a "
        "week, and a wait for players up to 1440 minutes, default 1440; else turns up to 86400 s: "
        "422 turn_too_long), 'private' (default false: never listed in the "
        "lobby, seen and joined only with its invite link; the create answer then has 'invite' and "
        "'link'), 'bot_level' (easy, normal or strong: the level of a bot that takes a seat over, "
        "default normal)"
    )
    commands = commands[3:]  # the account bodies are components, referenced by name
    components["Error"] = {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            }
        },
    }
    components["Command"] = {"anyOf": commands}
    send_schema = components["SendCommand"]
    send_schema["properties"]["command"] = {"$ref": REF.format(name="Command")}
    send_schema["properties"]["command_id"] |= {
        "pattern": "^(?!" + "|".join(RESERVED_PREFIXES) + ")",
        "description": "The seat's own id for this command (a retry sends the same one); ids "
        "beginning like the server's own (" + ", ".join(RESERVED_PREFIXES) + ") are refused: 422 "
        "reserved_command_id",
    }
    components["CreateGame"]["properties"]["game"] = {"enum": list(game_names())}
    tighten(components)  # the bodies as tight as the server's own checks
    components.update(chat_schemas())  # services.api.openapi_chat
    components.update(live_schemas(list(game_names())))  # services.api.openapi_live
    components.update(log_schemas())  # services.api.openapi_log
    components["CreateGame"]["description"] = options_text
    body_errors = BODY_ERRORS
    game = {"parameters": [GAME_ID]}
    paths: dict[str, Any] = {
        "/games": {
            "post": {
                "summary": "Create a table",
                "description": "A waiting table counts against its creator's budgets: with "
                "'Authorization: Bearer <account token>' (a browser: its ts_account cookie) the "
                "account's allowance, which grows with its rated games (429 "
                "'too_many_tables_from_account'); as a guest its address's, its network's (429 "
                "'too_many_tables_from_address', 'too_many_tables_from_network') and the guests' "
                "pool (503 'too_many_tables'). Turn-based tables are counted apart.",
                "parameters": [IDEMPOTENCY_KEY],
                "requestBody": _body("CreateGame"),
                "responses": {
                    "201": _ok("The table id and the host token"),
                    **_errors(*body_errors, 409, s409="The Idempotency-Key was used with another body"),
                },
            },
            "get": {
                "summary": "The lobby: open and running tables",
                "parameters": [_query("limit", "At most this many tables", 1, MAX_LOBBY_PAGE)],
                "responses": {"200": _ok("Tables"), **_errors(422)},
            },
        },
        "/games/{game_id}/players": {
            **game,
            "post": {
                "summary": "Take the next seat; the last seat starts the game",
                "description": "With 'Authorization: Bearer <account token>' (a browser: its "
                "'ts_account' cookie) the seat is the account's (name optional, defaults to the display "
                "name); without either the seat is anonymous.",
                "security": [{"bearer": []}, {"account_cookie": []}, {}],
                "parameters": [JOIN_IDEMPOTENCY_KEY],
                "requestBody": _body("JoinGame"),
                "responses": {
                    "201": _ok("The seat and its token"),
                    **_errors(
                        *body_errors,
                        401,
                        404,
                        409,
                        s401="Bad account token (header or cookie)",
                        s409="Full, started, the account already sits here, or the Idempotency-Key "
                        "was used with another body",
                    ),
                },
            },
        },
        "/games/{game_id}/commands": {
            **game,
            "post": {
                "summary": "Send a command as the token's seat",
                "security": [{"bearer": []}],
                "requestBody": _body("SendCommand"),
                "responses": {
                    "200": _ok(
                        "Version, the events as this seat sees them, and a signed receipt",
                        {
                            "type": "object",
                            "required": ["version", "events", "receipt"],
                            "properties": {
                                "version": {"type": "integer"},
                                "events": {"type": "array"},
                                "receipt": RECEIPT,
                            },
                        },
                    ),
                    **_errors(*body_errors, 401, 403, 404, 409, s409="Conflict, reuse or game over"),
                },
            },
        },
        "/games/{game_id}/view": {
            **game,
            "get": {
                "summary": "The caller's view (a spectator's without a token)",
                "description": COOKIES,
                "security": BEARER,
                "parameters": [_query("at", "Time travel: the view at this version", 1, MAX_VERSION)],
                "responses": {
                    "200": _ok("The view", {"$ref": REF.format(name="View")}),
                    **_errors(401, 404, 422),
                },
            },
        },
        "/games/{game_id}/events": {
            **game,
            "get": {
                "summary": "Events as the caller may see them",
                "description": COOKIES,
                "security": BEARER,
                "parameters": [
                    _query("after", "Only versions after this", 0, MAX_VERSION),
                    _query("limit", "At most this many", 1, MAX_EVENTS_PAGE),
                    LANG,
                ],
                "responses": {
                    "200": _ok(
                        "Events and the head version; each event says 'by' whom its batch came: "
                        "'player', 'bot' or 'timeout'"
                    ),
                    **_errors(401, 404, 422),
                },
            },
        },
        "/games/{game_id}/bots": {
            **game,
            "post": {
                "summary": "The host seats bots of a level in every empty seat, or in 'count' of them "
                "(host token or ts_host_<id> cookie); body {} or {'level': 'easy'|'normal'|'strong', "
                "'count': n} (default normal, every free seat; 422 invalid_bot_level, "
                "invalid_bot_count)",
                "security": [{"bearer": []}],
                "requestBody": _body("FillBots"),
                "responses": {
                    "200": _ok("The seats the bots took: {'seats': [..]}"),
                    **_errors(
                        *body_errors,
                        401,
                        403,
                        404,
                        409,
                        s401="Missing token",
                        s403="Not the host",
                        s409="The table is not waiting",
                    ),
                },
            },
        },
        "/games/{game_id}/leave": {
            **game,
            "post": {
                "summary": "Leave the table: while waiting the seat is freed; during play a bot takes it",
                "description": "The seat's token, or a browser's 'ts_seat_<game_id>' cookie (then cleared).",
                "security": [{"bearer": []}, {}],
                "requestBody": _body("Empty"),
                "responses": {
                    "200": _ok("The seat left: {'seat': i}"),
                    **_errors(
                        *body_errors,
                        401,
                        403,
                        404,
                        409,
                        s401="Bad or missing token",
                        s409="Already left, or the game is over",
                    ),
                },
            },
        },
        "/games/{game_id}/reclaim": {
            **game,
            "post": {
                "summary": "Take back your seat from the bot that took it over after your timeouts",
                "description": "The seat's token, or a browser's 'ts_seat_<game_id>' cookie. The seat's "
                "turn timer starts again for you, with a fresh run of timeouts before the next takeover; "
                "the game stays unrated (a bot played for the seat). Recorded as 'seat_reclaimed'.",
                "security": [{"bearer": []}, {}],
                "requestBody": _body("Empty"),
                "responses": {
                    "200": _ok("The seat taken back: {'seat': i}"),
                    **_errors(
                        *body_errors,
                        401,
                        403,
                        404,
                        409,
                        s401="Bad or missing token",
                        s403="Not a seat's token (the host's)",
                        s409="not_taken_over (no bot plays the seat), cannot_reclaim (the seat was left, "
                        "or a bot sits there from the start), game_over, not_started, table_expired",
                    ),
                },
            },
        },
        "/games/{game_id}/scores": {
            **game,
            "get": {
                "summary": "The scoreboard",
                "responses": {"200": _ok("Per round and totals"), **_errors(404)},
            },
        },
        "/games/{game_id}/live": {
            **game,
            "get": {
                "summary": "Server-sent events: one message per version with the caller's view",
                "security": BEARER,
                "responses": {"200": game_stream(), **_errors(401, 404, 422)},
            },
        },
        "/lobby/live": {
            "get": {
                "summary": "Server-sent events: the whole lobby, then each table that changed",
                "responses": {"200": lobby_stream()},
            },
        },
        "/games/{game_id}/audit": {
            **game,
            "get": {
                "summary": "Per finished round: seed, chain check, chance outcomes, events",
                "security": BEARER,
                "responses": {"200": _ok("The audit"), **_errors(401, 404)},
            },
        },
        "/games/{game_id}/export": {
            **game,
            "get": {
                "summary": "A finished game as one self-contained document for the offline verifier",
                "description": "With the query 'chat=1': plus a 'chat' section (the table's chat, "
                "its own hash chain, checked by 'tablestream verify')",
                "responses": {
                    "200": _ok("The export; its 'keys' are those of /.well-known/tablestream-keys"),
                    **_errors(404, 409, s409="Game not finished"),
                },
            },
        },
        "/games/{game_id}/replay": {
            **game,
            "get": {
                "summary": "A finished game at one version: the spectator's and every seat's view, "
                "and that version's events in full",
                "parameters": [_query("at", "The version (default: the last)", 1, MAX_VERSION), LANG],
                "responses": {
                    "200": _ok("version, head, spectator, seats, events"),
                    **_errors(404, 409, 422, s409="Game not finished", s422="Bad 'at' or 'lang'"),
                },
            },
        },
        "/games/{game_id}/replay/index": {
            **game,
            "get": {
                "summary": "A finished game's table of contents: where each round and each step (Skull "
                "King's bidding and tricks, 6 nimmt!'s draft and turns, Skull's placing, auction and "
                "challenge) begins and ends, every seat's moves, and the caller's seat",
                "description": COOKIES,
                "security": BEARER,
                "responses": {
                    "200": _ok("game, head, players, rounds, steps, moves, you", REPLAY_INDEX),
                    **_errors(401, 404, 409, s409="Game not finished"),
                },
            },
        },
        "/games/options": {
            "get": {
                "summary": "Per game: title, player counts and every table option with its meaning; "
                "the narration's languages",
                "responses": {"200": _ok("games, practice_seed, languages")},
            },
        },
        **ACCOUNT_PATHS,
        **chat_paths(game, _body, _ok, _errors, body_errors),
        **log_paths(game, _body, _ok, _errors, body_errors),
        **hint_paths(game, _body, _ok, _errors, body_errors),
        **your_tables_paths(game, body_errors, _error, _ok),
        **QUICKPLAY_PATHS,
        **invite_paths(_error, _body, body_errors, _retry_later),
        **OPERATOR_PATHS,
        **DISPUTE_PATHS,
        "/healthz": {
            "get": {
                "summary": "Readiness: Redis answers and the process is not shutting down (the workers' "
                "progress is not read: a lag is an alert, not a reason to leave the load balancer)",
                "responses": {
                    "200": _ok("ok"),
                    "503": {**_ok("Not ready: the reason is in the body", NOT_READY), "headers": RETRY_AFTER},
                },
            }
        },
        "/livez": {"get": {"summary": "Liveness: the process answers", "responses": {"200": _ok("alive")}}},
        "/.well-known/tablestream-keys": {
            "get": {
                "summary": "The public keys that sign receipts, with their validity periods and signed-note "
                "vkeys (cacheable for 5 minutes; old keys stay listed after a rotation)",
                "responses": {"200": _ok("The keys", SIGNING_KEYS)},
            }
        },
    }
    components["QuickPlayRequest"] = quickplay_schema()
    add_invite_parameter(paths)
    _add_refusals(paths)
    components.update(operator_components())
    components.update(dispute_components())
    del create, join, send, empty
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Tablestream",
            "version": "1",
            "description": "Skull, 6 nimmt! and Skull King: event-sourced, provably fair, auditable.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "account_cookie": {"type": "apiKey", "in": "cookie", "name": "ts_account"},
                "quickplay_cookie": {"type": "apiKey", "in": "cookie", "name": "ts_quickplay"},
            },
        },
    }
