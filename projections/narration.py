"""One sentence per game event, as a seat may see it, in English, Polish, French and Turkish.

``narrate`` reads the builtins dict of an event exactly as the API returns it to a viewer
(``msgspec.to_builtins`` of the possibly redacted event, with ``type`` and maybe ``version``) and
says only what that dict holds: a hidden field is ``None`` and the sentence then stays vague
("Bart places a disc"), while the same event shown to its owner or after the game names it
("Bart places a skull"). The web client's game log and the CLI demo use the same sentences.

The wording is data: the ``log.*`` entries of the glossary (``projections.words``, one JSON file
per language shared with the web client), ``str.format`` templates with named placeholders, or
plural objects chosen by CLDR's rules for a count. The code below only picks a key and computes
the values of its placeholders. Seats and rows are numbered from 1 for people, as on the paper
score pads (seat 0 is "Seat 1" when no name is known).

Sentences about something a seat did by its own command ("Ada bids 3") are built from the
language's ``actor.*`` frame around a predicate ("bids 3"), so that ``by="bot"`` and
``by="timeout"`` can mark who really acted: "Ada (bot) bids 3", "Ada ran out of time: bids 3".
Polish and Turkish sentences avoid inflecting names: a name is a subject or stands after a colon.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain.six_nimmt.cards import HAND_SIZE
from domain.skull_king.cards import CARDS
from projections.words import DEFAULT_LANGUAGE, GLOSSARY, LANGUAGES, Entry, word

__all__ = [
    "CATALOGS",
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "describe_move",
    "narrate",
    "narrates",
    "pick_language",
]

SEED_SHOWN = 12  # hex digits of a seed or commitment shown in a sentence
LOG = "log."  # the narration's own keys in the glossary; game titles ("game.*") are the page's too

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


class _Say:
    """The language, names and manner of one ``narrate`` call, with the helpers every event uses."""

    def __init__(self, lang: str, names: Sequence[str], by: str | None) -> None:
        self.lang = lang if lang in GLOSSARY else DEFAULT_LANGUAGE
        self.names = names
        self.by = by

    def __call__(self, key: str, **values: Any) -> str:
        return word(self.lang, LOG + key, **values)

    def knows(self, key: str) -> bool:
        return LOG + key in GLOSSARY[self.lang]

    def title(self, game: Any) -> str:
        key = f"game.{game}"
        return word(self.lang, key) if key in GLOSSARY[self.lang] else str(game)

    def name(self, seat: Any) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        number = seat + 1 if isinstance(seat, int) else seat
        return self("seat", number=number)

    def count(self, noun: str, n: int) -> str:
        """``n`` and the noun in the form the language's plural rules pick: "1 flower", "5 kwiatów"."""
        return self(f"n.{noun}", n=n)

    def listing(self, items: Sequence[str]) -> str:
        if len(items) <= 1:
            return "".join(items)
        return f"{', '.join(items[:-1])} {self('and')} {items[-1]}"

    def by_seat(self, values: Sequence[Any], shown: Callable[[Any], str] = str) -> str:
        """One value per seat in seat order: "Ada 2, Bart 0"."""
        return ", ".join(f"{self.name(seat)} {shown(value)}" for seat, value in enumerate(values))

    def actor(self, seat: Any, predicate: str, acting: bool = True) -> str:
        """``seat`` did ``predicate``; when it is the seat's own command, ``by`` marks a bot or a timeout."""
        manner = self.by if acting and self.by in ("bot", "timeout") else "player"
        return self(f"actor.{manner}", name=self.name(seat), predicate=predicate)


def _short(hex_text: Any) -> str:
    text = str(hex_text)
    return text if len(text) <= SEED_SHOWN else text[:SEED_SHOWN] + "…"


def _signed(value: Any) -> str:
    return f"{value:+d}" if isinstance(value, int) else str(value)


# -- the table ----------------------------------------------------------------------------------


def _table_created(say: _Say, e: Mapping[str, Any]) -> str:
    key = "table.table_created.practice" if e.get("practice") else "table.table_created"
    return say(key, game=say.title(e.get("game")), players=e.get("players"))


def _player_joined(say: _Say, e: Mapping[str, Any]) -> str:
    seat = e["seat"]
    return say("table.player_joined", name=e.get("name") or say.name(seat), number=seat + 1)


def _game_finished(say: _Say, e: Mapping[str, Any]) -> str:
    winners = list(e.get("winners") or ())
    key = "table.game_finished" if winners else "table.game_finished.none"
    names = say.listing([say.name(seat) for seat in winners])
    return say(key, n=len(winners), winners=names, scores=say.by_seat(e.get("scores") or ()))


def _bot_took_over(say: _Say, e: Mapping[str, Any]) -> str:
    reason = str(e.get("reason"))
    key = f"table.bot_took_over.{reason}"
    why = say(key) if say.knows(key) else reason
    return say("table.bot_took_over", name=say.name(e["seat"]), reason=why)


def _bot_seated(say: _Say, e: Mapping[str, Any]) -> str:
    seat = e["seat"]
    name = e.get("name") or say.name(seat)
    level = e.get("level")  # only a level other than normal is recorded
    if not level:
        return say("table.bot_seated", name=name, number=seat + 1)
    shown = say(f"table.bot_level.{level}") if say.knows(f"table.bot_level.{level}") else str(level)
    return say("table.bot_seated.level", name=name, number=seat + 1, level=shown)


def _hint_given(say: _Say, e: Mapping[str, Any]) -> str:
    """A hint, as its seat (or anyone after the game) sees it: the suggested move; else only that
    one was asked for (``command`` is ``None`` in other seats' views while the game runs)."""
    name = say.name(e["seat"])
    command = e.get("command")
    if not isinstance(command, Mapping):
        return say("table.hint_given", name=name)
    return say("table.hint_given.shown", name=name, predicate=suggested_move(say, command))


def suggested_move(say: _Say, command: Mapping[str, Any]) -> str:
    """A command as the predicate of the event it would make ("bids 2 tricks", "plays the red 7")."""
    kind = command.get("type")
    if kind == "play_card":
        card = _sk_card(say, command.get("card"))
        declared = command.get("as")
        if declared is None:
            return say("skull-king.card_played", card=card)
        return say("skull-king.card_played.as", card=card, declared=say(f"skull-king.as.{declared}"))
    if kind == "bid" and "tricks" in command:
        return say("skull-king.bid_placed", tricks=say.count("trick", command["tricks"]))
    if kind == "bid":
        return say("skull.bid_made", count=command.get("count"))
    if kind == "place_disc":
        return say("skull.disc_placed", disc=_disc(say, command.get("disc")))
    if kind == "pass":
        return say("skull.player_passed")
    if kind == "select_card":
        return say("six-nimmt.card_selected", card=command.get("card"))
    if kind == "draft_card":
        return say("six-nimmt.card_drafted", card=command.get("card"))
    if kind == "choose_row":
        return say("six-nimmt.row_chosen", row=int(command.get("row", 0)) + 1)
    if kind == "flip":
        return say("skull.stack_flipped", name=say.name(command.get("seat")))
    if kind == "discard_pick":
        return say("skull.disc_drawn", n=int(command.get("position", 0)) + 1)
    if kind == "discard_own":
        return say("skull.disc_given_up", disc=_disc(say, command.get("disc")))
    if kind == "choose_first_player":
        return say("skull.first_named", name=say.name(command.get("seat")))
    values = " ".join(f"{key} {value}" for key, value in command.items() if key != "type")
    return f"{kind} {values}".strip()


TABLE: dict[str, Callable[[_Say, Mapping[str, Any]], str]] = {
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
        seconds=e.get("turn_seconds"),
        minutes=e.get("expire_minutes"),
    ),
}


# -- Skull --------------------------------------------------------------------------------------


def _disc(say: _Say, disc: Any) -> str:
    return say(f"skull.disc.{disc}")


def _skull_round_started(say: _Say, e: Mapping[str, Any]) -> str:
    reason = say(f"skull.first.{e['reason']}")
    return say("skull.round_started", round=e["round"], name=say.name(e["first_player"]), reason=reason)


def _disc_placed(say: _Say, e: Mapping[str, Any]) -> str:
    disc = e.get("disc")
    if disc is None:
        return say.actor(e["seat"], say("skull.disc_placed.hidden"))
    return say.actor(e["seat"], say("skull.disc_placed", disc=_disc(say, disc)))


def _disc_flipped(say: _Say, e: Mapping[str, Any]) -> str:
    key = "skull.disc_flipped.automatic" if e.get("automatic") else "skull.disc_flipped"
    sentence = say(key, name=say.name(e["seat"]), disc=_disc(say, e["disc"]))
    return sentence + say("bang") if e["disc"] == "skull" else sentence


def _challenge_failed(say: _Say, e: Mapping[str, Any]) -> str:
    seat, owner = e["seat"], e["skull_owner"]
    if seat == owner:
        return say.actor(seat, say("skull.challenge_failed.own"), acting=False)
    return say.actor(seat, say("skull.challenge_failed", owner=say.name(owner)), acting=False)


def _disc_lost(say: _Say, e: Mapping[str, Any]) -> str:
    how = say(f"skull.lost.{e['reason']}")
    disc = e.get("disc")
    if disc is None:
        predicate = say("skull.disc_lost.hidden", how=how)
    else:
        predicate = say("skull.disc_lost", disc=_disc(say, disc), how=how)
    return say.actor(e["seat"], predicate, acting=e["reason"] == "chosen")


def _round_ended(say: _Say, e: Mapping[str, Any]) -> str:
    return say(
        "skull.round_ended",
        round=e["round"],
        challenger=say.name(e["challenger"]),
        bid=e["bid"],
        outcome=say(f"skull.outcome.{e['outcome']}"),
        points=say.by_seat(e["points"]),
    )


SKULL: dict[str, Callable[[_Say, Mapping[str, Any]], str]] = {
    "round_started": _skull_round_started,
    "disc_placed": _disc_placed,
    "bid_made": lambda say, e: say.actor(e["seat"], say("skull.bid_made", count=e["count"])),
    "player_passed": lambda say, e: say.actor(e["seat"], say("skull.player_passed")),
    "challenge_started": lambda say, e: say(
        "skull.challenge_started", name=say.name(e["seat"]), flowers=say.count("flower", e["bid"])
    ),
    "disc_flipped": _disc_flipped,
    "challenge_succeeded": lambda say, e: say.actor(
        e["seat"],
        say("skull.challenge_succeeded", points=say.count("point", e["points"])),
        acting=False,
    ),
    "challenge_failed": _challenge_failed,
    "discs_shuffled": lambda say, e: say(
        "skull.discs_shuffled", name=say.name(e["seat"]), count=e["count"], picker=say.name(e["picker"])
    ),
    "disc_lost": _disc_lost,
    "player_eliminated": lambda say, e: say.actor(e["seat"], say("skull.player_eliminated"), acting=False),
    "round_ended": _round_ended,
    "last_chance_returned": lambda say, e: say.actor(
        e["seat"], say("skull.last_chance_returned"), acting=False
    ),
    "last_chance_given": lambda say, e: say.actor(e["seat"], say("skull.last_chance_given"), acting=False),
    "first_player_choice_requested": lambda say, e: say.actor(
        e["seat"], say("skull.first_player_choice_requested"), acting=False
    ),
}


# -- 6 nimmt! -----------------------------------------------------------------------------------


def _cards(cards: Sequence[Any]) -> str:
    return ", ".join(str(card) for card in cards)


def _six_cards_dealt(say: _Say, e: Mapping[str, Any]) -> str:
    cards = say.count("card", HAND_SIZE)
    return say("six-nimmt.cards_dealt", round=e["round"], cards=cards, rows=_cards(e["rows"]))


def _draft_opened(say: _Say, e: Mapping[str, Any]) -> str:
    cards = say.count("card", len(e["cards"]))
    return say("six-nimmt.draft_opened", round=e["round"], cards=cards, name=say.name(e["first_drafter"]))


def _card_selected(say: _Say, e: Mapping[str, Any]) -> str:
    card = e.get("card")
    if card is None:
        return say.actor(e["seat"], say("six-nimmt.card_selected.hidden"))
    return say.actor(e["seat"], say("six-nimmt.card_selected", card=card))


def _row_taken(say: _Say, e: Mapping[str, Any]) -> str:
    chosen = bool(e.get("chosen"))
    key = "six-nimmt.row_taken.chosen" if chosen else "six-nimmt.row_taken"
    predicate = say(key, row=e["row"] + 1, card=e["card"], bullheads=say.count("bullhead", e["bullheads"]))
    return say.actor(e["seat"], predicate, acting=chosen)


def _six_round_scored(say: _Say, e: Mapping[str, Any]) -> str:
    scores = ", ".join(
        f"{say.name(seat)} +{penalty} ({total})"
        for seat, (penalty, total) in enumerate(zip(e["penalties"], e["totals"], strict=False))
    )
    key = "six-nimmt.round_scored.final" if e.get("final") else "six-nimmt.round_scored"
    return say(key, round=e["round"], scores=scores)


SIX_NIMMT: dict[str, Callable[[_Say, Mapping[str, Any]], str]] = {
    "cards_dealt": _six_cards_dealt,
    "draft_opened": _draft_opened,
    "card_drafted": lambda say, e: say.actor(e["seat"], say("six-nimmt.card_drafted", card=e["card"])),
    "draft_completed": lambda say, e: say("six-nimmt.draft_completed", rows=_cards(e["rows"])),
    "card_selected": _card_selected,
    "cards_revealed": lambda say, e: say(
        "six-nimmt.cards_revealed", turn=e["turn"], cards=say.by_seat(e["cards"])
    ),
    "card_placed": lambda say, e: say.actor(
        e["seat"], say("six-nimmt.card_placed", card=e["card"], row=e["row"] + 1), acting=False
    ),
    "row_choice_awaited": lambda say, e: say(
        "six-nimmt.row_choice_awaited", card=e["card"], name=say.name(e["seat"])
    ),
    "row_taken": _row_taken,
    "round_scored": _six_round_scored,
}


# -- Skull King ---------------------------------------------------------------------------------


def _sk_card(say: _Say, card: Any) -> str:
    info = CARDS.get(card) if isinstance(card, str) else None
    if info is None:
        return str(card)
    if info.kind == "number":
        return say("skull-king.card.number", suit=say(f"skull-king.suit.{info.suit}"), rank=info.rank)
    return say(f"skull-king.card.{info.kind}")


def _sk_cards_dealt(say: _Say, e: Mapping[str, Any]) -> str:
    shown = [hand for hand in e.get("hands") or () if hand is not None]
    count = len(shown[0]) if shown else e["round"]
    return say(
        "skull-king.cards_dealt",
        round=e["round"],
        dealer=say.name(e["dealer"]),
        leader=say.name(e["leader"]),
        cards=say.count("card", count),
    )


def _bid_placed(say: _Say, e: Mapping[str, Any]) -> str:
    tricks = e.get("tricks")
    if tricks is None:
        return say.actor(e["seat"], say("skull-king.bid_placed.hidden"))
    return say.actor(e["seat"], say("skull-king.bid_placed", tricks=say.count("trick", tricks)))


def _card_played(say: _Say, e: Mapping[str, Any]) -> str:
    card = _sk_card(say, e["card"])
    declared = e.get("as")
    if declared is None:
        return say.actor(e["seat"], say("skull-king.card_played", card=card))
    return say.actor(
        e["seat"], say("skull-king.card_played.as", card=card, declared=say(f"skull-king.as.{declared}"))
    )


def _trick_won(say: _Say, e: Mapping[str, Any]) -> str:
    bonus = e.get("bonus") or 0
    key = "skull-king.trick_won.bonus" if bonus else "skull-king.trick_won"
    predicate = say(key, trick=e["trick"], card=_sk_card(say, e["card"]), bonus=bonus)
    return say.actor(e["winner"], predicate, acting=False)


def _sk_round_scored(say: _Say, e: Mapping[str, Any]) -> str:
    scores = ", ".join(
        f"{say.name(seat)} {_signed(score)} ({total})"
        for seat, (score, total) in enumerate(zip(e["scores"], e["totals"], strict=False))
    )
    return say("skull-king.round_scored", round=e["round"], scores=scores)


SKULL_KING: dict[str, Callable[[_Say, Mapping[str, Any]], str]] = {
    "first_dealer_chosen": lambda say, e: say("skull-king.first_dealer_chosen", name=say.name(e["seat"])),
    "cards_dealt": _sk_cards_dealt,
    "bid_placed": _bid_placed,
    "bids_revealed": lambda say, e: say("skull-king.bids_revealed", bids=say.by_seat(e["bids"])),
    "card_played": _card_played,
    "trick_won": _trick_won,
    "round_scored": _sk_round_scored,
}

GAMES: dict[str, dict[str, Callable[[_Say, Mapping[str, Any]], str]]] = {
    "skull": SKULL,
    "six-nimmt": SIX_NIMMT,
    "skull-king": SKULL_KING,
}


def describe_move(command: Mapping[str, Any], lang: str = "en") -> str:
    """A command in words, as the predicate of the event it makes ("bids 2 tricks")."""
    return suggested_move(_Say(lang, (), None), command)


def narrates(game: str, event_type: str) -> bool:
    """Whether ``narrate`` has a sentence of its own for this event type (else it names the type)."""
    return event_type in TABLE or event_type in GAMES.get(game, {})


def narrate(
    game: str, event: Mapping[str, Any], names: Sequence[str], lang: str = "en", by: str | None = None
) -> str:
    """One sentence for ``event`` as the viewer received it (hidden fields ``None``).

    ``game`` is the public game name, ``names`` the seat names in seat order, ``lang`` one of
    ``LANGUAGES`` (anything else reads as English), ``by`` how the command came: ``None`` or
    ``"player"``, ``"bot"`` or ``"timeout"``; it marks sentences about the seat's own action.
    An event type this module does not know is named by its tag rather than failing.
    """
    say = _Say(lang, names, by)
    event_type = str(event.get("type"))
    build = TABLE.get(event_type) or GAMES.get(game, {}).get(event_type)
    if build is None:
        return say("unknown", type=event_type)
    return build(say, event)
