"""OpenAPI of the hints at practice tables and the post-game review (``services.api.hint_routes``,
``services.api.review_routes``), added to ``/openapi.json`` by ``services.api.openapi``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from projections.words import LANGUAGES

HINTS_RATE_LIMITED = {("/games/{game_id}/hint", "post")}

LANG_OF_REASON = {
    "name": "lang",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "enum": list(LANGUAGES)},
    "description": "The language of the words ('text'); default: the Accept-Language header's (hint) or en",
}
RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before asking again", "schema": {"type": "integer"}}
}


def hint_paths(
    game: dict[str, Any],
    body: Callable[[str], dict[str, Any]],
    ok: Callable[..., dict[str, Any]],
    errors: Callable[..., dict[str, Any]],
    body_errors: tuple[int, ...],
) -> dict[str, Any]:
    return {
        "/games/{game_id}/hint": {
            **game,
            "post": {
                "summary": "Ask the strong bot what it would play from your seat (practice tables only)",
                "description": "The seat's token, or a browser's 'ts_seat_<game_id>' cookie, while the seat "
                "is awaited. The server asks the 'strong' bot level from the seat's own view (exactly GET "
                "/view's), its chance keyed by the game's secret. The hint is recorded as the table event "
                "'hint_given' (other seats see only that a hint was asked for, until the game is over), "
                "and a game with hints is unrated. Asked again before the game moves on, the same hint "
                "comes back and nothing new is recorded. Per seat at most TABLESTREAM_HINT_RATE (10/minute).",
                "security": [{"bearer": []}, {}],
                "parameters": [LANG_OF_REASON],
                "requestBody": body("Empty"),
                "responses": {
                    "200": ok(
                        "The hint: {'version': the hint's version, 'command': one of the seat's legal "
                        "commands, 'command_text': it in words, 'reason': null or {'key': glossary key, "
                        "'params': {...}, 'text': the reason in the language}, 'receipt': {...}}"
                    ),
                    **errors(
                        *body_errors,
                        401,
                        403,
                        404,
                        409,
                        s401="Bad or missing token",
                        s403="hints_not_allowed (not a practice table: never at rated or public tables), "
                        "not_a_player (the host's token)",
                        s409="not_your_turn, seat_taken_over, version_conflict (the game moved on while "
                        "the bot thought: ask again), game_over, not_started",
                    ),
                },
            },
        },
        "/games/{game_id}/review": {
            **game,
            "get": {
                "summary": "The strong bot's review of one seat's moves, once the game is over",
                "description": "For each move the seat's player made: what was played, what the 'strong' "
                "level would have played from the seat's view then, whether they differ, and the share of "
                "its simulations behind each candidate. Built off the request by an RQ job (queue "
                "'review') and cached; while it is built the answer is 202 with Retry-After.",
                "parameters": [
                    {
                        "name": "seat",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 0},
                        "description": "The seat reviewed (default 0)",
                    },
                    LANG_OF_REASON,
                ],
                "responses": {
                    "200": ok(
                        "{'game_id', 'seat', 'level': 'strong', 'head', 'differs': count, 'moves': [{"
                        "'version', 'played', 'played_text', 'strong', 'strong_text', 'differs', "
                        "'played_share', 'reason', 'shares': [{'command', 'text', 'share'}]}]}"
                    ),
                    "202": {
                        "description": "Being built: {'status': 'computing', 'retry_after': s}",
                        "headers": RETRY_AFTER,
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    **errors(
                        404,
                        409,
                        422,
                        s409="game_not_finished (a review waits for the end), not_a_person (a bot sat "
                        "there from the start)",
                        s422="invalid_query (seat or lang)",
                    ),
                },
            },
        },
    }
