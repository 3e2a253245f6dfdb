"""One sentence per event, as a seat may see it, in English, Polish, French and Turkish.

``narrate`` reads the builtins dict of an event exactly as the API returns it to a viewer
(``msgspec.to_builtins`` of the possibly redacted event, with ``type`` and maybe ``version``) and
says only what that dict holds: a hidden field is ``None`` and the sentence then stays vague
("Bart places a disc"), while the same event shown to its owner or after the game names it
("Bart places a skull"). The web client's game log and the CLI demo use the same sentences.

The table's own events (``table_created``, ``player_joined``, ``hint_given``, ...) are said here;
each game's events and commands by its own narration module (``projections/<package>/narration.py``,
the ``projections.registry.GameNarration`` protocol), found through the registry by the game's
public name: nothing here knows a game by name.

The wording is data: the ``log.*`` entries of the glossary (``projections.words``: the common
glossary and each game's own, one JSON file per language shared with the web client),
``str.format`` templates with named placeholders, or plural objects chosen by CLDR's rules for a
count. The code only picks a key and computes the values of its placeholders, with the helpers of
``projections.say.Say`` (seats numbered from 1, who acted: "Ada (bot) bids 3").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from projections.registry import narration_for
from projections.say import Say, Sentence
from projections.words import DEFAULT_LANGUAGE, GLOSSARY, LANGUAGES, Entry

__all__ = [
    "CATALOGS",
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "describe_move",
    "narrate",
    "narrates",
    "pick_language",
    "suggested_move",
]

SEED_SHOWN = 12  # hex digits of a seed or commitment shown in a sentence

# The whole glossary per language (the narration reads its ``log.*`` keys and the game titles).
CATALOGS: Mapping[str, Mapping[str, Entry]] = GLOSSARY


# -- choosing a language ------------------------------------------------------------------------


def pick_language(accept_language: str | None) -> str:
    """The best of ``LANGUAGES`` for an ``Accept-Language`` header, by quality then order; ``"en"``
    when the header is missing, malformed or names none of them."""
    if not accept_language:
        return DEFAULT_LANGUAGE
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(accept_language.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value.strip())
                except ValueError:
                    quality = 0.0
        primary = tag.strip().split("-")[0].lower()
        if primary in LANGUAGES and quality > 0:
            ranked.append((-quality, index, primary))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE


# -- narrating ----------------------------------------------------------------------------------


def _short(hex_text: Any) -> str:
    text = str(hex_text)
    return text if len(text) <= SEED_SHOWN else text[:SEED_SHOWN] + "…"


# -- the table ----------------------------------------------------------------------------------


def _table_created(say: Say, e: Mapping[str, Any]) -> str:
    key = "table.table_created.practice" if e.get("practice") else "table.table_created"
    return say(key, game=say.title(e.get("game")), players=e.get("players"))


def _player_joined(say: Say, e: Mapping[str, Any]) -> str:
    seat = e["seat"]
    return say("table.player_joined", name=e.get("name") or say.name(seat), number=seat + 1)


def _game_finished(say: Say, e: Mapping[str, Any]) -> str:
    winners = list(e.get("winners") or ())
    key = "table.game_finished" if winners else "table.game_finished.none"
    names = say.listing([say.name(seat) for seat in winners])
    return say(key, n=len(winners), winners=names, scores=say.by_seat(e.get("scores") or ()))


def _bot_took_over(say: Say, e: Mapping[str, Any]) -> str:
    reason = str(e.get("reason"))
    key = f"table.bot_took_over.{reason}"
    why = say(key) if say.knows(key) else reason
    return say("table.bot_took_over", name=say.name(e["seat"]), reason=why)


def _bot_seated(say: Say, e: Mapping[str, Any]) -> str:
    seat = e["seat"]
    name = e.get("name") or say.name(seat)
    level = e.get("level")  # only a level other than normal is recorded
    if not level:
        return say("table.bot_seated", name=name, number=seat + 1)
    shown = say(f"table.bot_level.{level}") if say.knows(f"table.bot_level.{level}") else str(level)
    return say("table.bot_seated.level", name=name, number=seat + 1, level=shown)


def _hint_given(say: Say, e: Mapping[str, Any]) -> str:
    """A hint, as its seat (or anyone after the game) sees it: the suggested move; else only that
    one was asked for (``command`` is ``None`` in other seats' views while the game runs)."""
    name = say.name(e["seat"])
    command = e.get("command")
    if not isinstance(command, Mapping):
        return say("table.hint_given", name=name)
    return say("table.hint_given.shown", name=name, predicate=suggested_move(say, command))


def suggested_move(say: Say, command: Mapping[str, Any]) -> str:
    """A command of ``say.game`` as the predicate of the event it would make ("bids 2 tricks",
    "plays the red 7"), said by the game's narration; a command it does not know, by its fields."""
    said = narration_for(say.game).describe_command(say, command)
    if said is not None:
        return said
    values = " ".join(f"{key} {value}" for key, value in command.items() if key != "type")
    return f"{command.get('type')} {values}".strip()


TABLE: dict[str, Sentence] = {
    "table_created": _table_created,
    "player_joined": _player_joined,
    "game_started": lambda say, e: say("table.game_started"),
    "seed_revealed": lambda say, e: say("table.seed_revealed", round=e["round"], seed=_short(e["seed"])),
    "seed_chain_committed": lambda say, e: say(
        "table.seed_chain_committed", first_round=e["first_round"], commitment=_short(e["commitment"])
    ),
    "game_finished": _game_finished,
    "seat_left": lambda say, e: say("table.seat_left", name=say.name(e["seat"])),
    "seat_reclaimed": lambda say, e: say("table.seat_reclaimed", name=say.name(e["seat"])),
    "bot_took_over": _bot_took_over,
    "bot_seated": _bot_seated,
    "seat_claimed": lambda say, e: say(
        "table.seat_claimed", name=say.name(e["seat"]), account=e.get("display_name") or e["account_id"]
    ),
    "turn_timed_out": lambda say, e: say("table.turn_timed_out", name=say.name(e["seat"])),
    "table_expired": lambda say, e: say("table.table_expired"),
    "table_closed": lambda say, e: say("table.table_closed", reason=e["reason"]),
    "hint_given": _hint_given,
    "table_timers_set": lambda say, e: say(
        "table.table_timers_set" if e.get("turn_seconds") else "table.table_timers_set.off",
        turn=say.duration(int(e.get("turn_seconds") or 0)),
        expiry=say.duration(60 * int(e.get("expire_minutes") or 0)),
    ),
}


def describe_move(game: str, command: Mapping[str, Any], lang: str = "en") -> str:
    """A command of ``game`` in words, as the predicate of the event it makes ("bids 2 tricks")."""
    return suggested_move(Say(lang, game), command)


def narrates(game: str, event_type: str) -> bool:
    """Whether ``narrate`` has a sentence of its own for this event type (else it names the type)."""
    return event_type in TABLE or event_type in narration_for(game).SENTENCES


def narrate(
    game: str, event: Mapping[str, Any], names: Sequence[str], lang: str = "en", by: str | None = None
) -> str:
    """One sentence for ``event`` as the viewer received it (hidden fields ``None``).

    ``game`` is the public game name (``Rejected('unknown_game')`` for no such game), ``names`` the
    seat names in seat order, ``lang`` one of ``LANGUAGES`` (anything else reads as English), ``by``
    how the command came: ``None`` or ``"player"``, ``"bot"`` or ``"timeout"``; it marks sentences
    about the seat's own action. An event type neither the table nor the game knows is named by its
    tag rather than failing.
    """
    say = Say(lang, game, names, by)
    event_type = str(event.get("type"))
    build = TABLE.get(event_type) or narration_for(game).SENTENCES.get(event_type)
    if build is None:
        return say("unknown", type=event_type)
    return build(say, event)
