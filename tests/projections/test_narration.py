# ruff: noqa: RUF001 - Turkish sentences (dotless i)
"""Narration: every event of every game and of the table reads as a sentence in every language,
and a sentence says no more than the (possibly redacted) event it narrates.

The suites about every game take the registry's games and their events and commands from seeded
games of their own rules (``tests.support.samples``); the tests of one game's sentences name it."""

from __future__ import annotations

import random
import re
from typing import Any, get_args

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from domain.games import game_names, table_for
from domain.kernel import Event
from domain.six_nimmt import events as se
from domain.skull import events as ke
from domain.skull_king import events as ve
from domain.skull_king.cards import DECK
from domain.table import (
    TABLE_EVENTS,
    GameFinished,
    GameStarted,
    PlayerJoined,
    SeatClaimed,
    SeedChainCommitted,
    SeedRevealed,
    TableCreated,
)
from projections.narration import LANGUAGES, narrate, narrates, pick_language
from tests.domain.test_six_nimmt_games import OPTIONS as SIX_OPTIONS
from tests.domain.test_skull_properties import OPTIONS as SKULL_OPTIONS
from tests.domain.test_skull_properties import table_options
from tests.support.play import new_game, play_random
from tests.support.samples import command_samples, command_tags, event_samples, event_tags, steps

NAMES = ["Ada", "Bart", "Cleo", "Dan"]
HEX = "ab" * 32
PLACEHOLDER = re.compile(r"[{}]")

TABLE_SAMPLES: list[Event | dict[str, Any]] = [
    TableCreated(game_id="g1", game="skull", players=4, options={}, practice=False, commitment=HEX),
    PlayerJoined(seat=1, name="Bart", client_seed="cs"),
    SeatClaimed(seat=1, account_id="0123456789abcdef", display_name="Bart"),
    GameStarted(mix=HEX),
    SeedRevealed(round=2, seed=HEX),
    SeedChainCommitted(chain=1, first_round=101, commitment=HEX),
    GameFinished(scores=[2, 0, 1, 0], winners=[0]),
    # lifecycle events another change adds to the table; their sentences are ready
    {"type": "seat_left", "seat": 2},
    {"type": "bot_took_over", "seat": 2, "reason": "left"},
    {"type": "bot_took_over", "seat": 3, "reason": "timeouts"},
    {"type": "bot_took_over", "seat": 1, "reason": "host"},
    {"type": "bot_seated", "seat": 3, "name": "Bot Dan"},
    {"type": "turn_timed_out", "seat": 0},
    {"type": "table_expired"},
    {"type": "seat_reclaimed", "seat": 3},
    {"type": "table_closed", "reason": "abusive chat", "operator": "admin"},
    {"type": "table_timers_set", "turn_seconds": 60, "expire_minutes": 30, "takeover_after": 3},
    {"type": "table_timers_set", "turn_seconds": 0, "expire_minutes": 30, "takeover_after": 3},
    {"type": "hint_given", "seat": 1},  # as another seat sees it while the game runs
]
LIFECYCLE = {
    "seat_left",
    "bot_took_over",
    "bot_seated",
    "turn_timed_out",
    "table_expired",
    "table_timers_set",
    "hint_given",
}


def tag(event: Event | dict[str, Any] | type[Event]) -> str:
    """The wire tag of an event, an event dict or an event class."""
    if isinstance(event, dict):
        return str(event["type"])
    cls = event if isinstance(event, type) else type(event)
    return str(cls.__struct_config__.tag)


def shown(event: Event | dict[str, Any]) -> dict[str, Any]:
    return event if isinstance(event, dict) else msgspec.to_builtins(event)


def hint_samples(game: str) -> list[dict[str, Any]]:
    """A hint of each command of the game, as its seat sees it."""
    return [{"type": "hint_given", "seat": 1, "command": command} for command in command_samples(game)]


def every_sample() -> list[tuple[str, Event | dict[str, Any]]]:
    """The table's events (at the first game's table), then every game's played events and hints."""
    first = game_names()[0]
    return [(first, event) for event in TABLE_SAMPLES] + [
        (game, event) for game in game_names() for event in [*event_samples(game), *hint_samples(game)]
    ]


def assert_sentence(game: str, event: dict[str, Any], lang: str, **kwargs: Any) -> str:
    sentence = narrate(game, event, NAMES, lang, **kwargs)
    assert narrates(game, event["type"]), f"{game} {event['type']} has no sentence of its own"
    assert sentence.strip() and sentence != event["type"]
    assert not PLACEHOLDER.search(sentence), f"unfilled placeholder in {lang}: {sentence!r}"
    return sentence


# -- coverage -----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", game_names())
def test_the_sampled_games_reach_every_event_type_of_every_game(game: str) -> None:
    types = {tag(cls) for cls in get_args(table_for(game).rules.event_type)}
    assert types and types == event_tags(game) == {tag(event) for event in event_samples(game)}


def test_every_table_event_and_every_announced_lifecycle_event_has_a_sample_here() -> None:
    types = {tag(cls) for cls in TABLE_EVENTS} | LIFECYCLE
    assert types == {tag(event) for event in TABLE_SAMPLES}


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("game,event", every_sample(), ids=lambda v: v if isinstance(v, str) else tag(v))
def test_every_event_of_every_game_and_the_table_has_a_whole_sentence_in_every_language(
    lang: str, game: str, event: Event | dict[str, Any]
) -> None:
    assert_sentence(game, shown(event), lang)
    if not isinstance(event, dict) and tag(event) in event_tags(game):
        for viewer in (0, 1, None):
            assert_sentence(game, shown(table_for(game).redact(event, viewer, finished=False)), lang)


def test_the_languages_say_different_things_not_english_everywhere() -> None:
    for game, event in every_sample():
        sentences = {narrate(game, shown(event), NAMES, lang) for lang in LANGUAGES}
        assert len(sentences) >= 3, sentences


# -- what the sentences say ---------------------------------------------------------------------


def say(game: str, event: Event | dict[str, Any], viewer: int | None = 0, lang: str = "en", **kw: Any) -> str:
    if not isinstance(event, dict) and tag(event) in event_tags(game):
        event = table_for(game).redact(event, viewer, finished=False)
    return narrate(game, shown(event), NAMES, lang, **kw)


def test_a_hidden_disc_is_a_disc_and_a_visible_one_is_named() -> None:
    placed = ke.DiscPlaced(seat=1, disc="skull")
    assert say("skull", placed, viewer=0) == "Bart places a disc"
    assert say("skull", placed, viewer=1) == "Bart places a skull"
    assert (
        say("skull", ke.DiscPlaced(seat=3, disc="last_chance"), viewer=0) == "Dan places the Last chance disc"
    )
    assert say("skull", ke.DiscFlipped(seat=0, disc="skull")) == "Ada's disc is flipped: a skull!"
    assert say("skull", ke.DiscLost(seat=1, reason="chosen", disc="skull"), viewer=2) == (
        "Bart loses a disc (own choice)"
    )


def test_six_nimmt_sentences_name_cards_rows_from_one_and_bullheads() -> None:
    taken = se.RowTaken(seat=1, row=1, card=3, taken=(37, 55), bullheads=7, chosen=True)
    assert say("six-nimmt", taken) == "Bart takes row 2: 7 bullheads; 3 starts it"
    assert say("six-nimmt", taken, lang="pl") == "Bart zbiera rząd 2: 7 byków; karta 3 zaczyna go od nowa"
    assert say("six-nimmt", se.CardSelected(seat=1, card=55), viewer=0) == "Bart chooses a card"
    assert say("six-nimmt", se.CardSelected(seat=1, card=55), viewer=1) == "Bart chooses 55"
    assert say("six-nimmt", se.CardPlaced(seat=1, card=15, row=0), lang="fr") == (
        "Bart pose le 15 au bout de la rangée 1"
    )


def test_skull_king_cards_read_naturally_in_each_language() -> None:
    played = ve.CardPlayed(seat=1, card="yellow-7")
    assert [say("skull-king", played, lang=lang) for lang in LANGUAGES] == [
        "Bart plays yellow 7",
        "Bart zagrywa: żółta 7",
        "Bart joue le 7 jaune",
        "Bart sarı 7 oynadı",
    ]
    won = ve.TrickWon(trick=2, winner=0, card="skull-king", bonus=30)
    assert say("skull-king", won) == "Ada wins trick 2 with the Skull King (bonus +30)"
    mary = ve.CardPlayed(seat=2, card="scary-mary", as_="escape")
    assert say("skull-king", mary) == "Cleo plays Scary Mary as an Escape"
    assert say("skull-king", ve.CardPlayed(seat=0, card="mermaid-1"), lang="fr") == "Ada joue une Sirène"
    dealt = ve.CardsDealt(round=3, dealer=0, leader=1, hands=((), (), ()), unused=())
    assert say("skull-king", dealt, viewer=None) == "Round 3 begins; Ada deals 3 cards each; Bart leads"


def test_a_bid_stays_a_secret_until_it_is_ones_own() -> None:
    bid = ve.BidPlaced(seat=1, tricks=2)
    assert say("skull-king", bid, viewer=0) == "Bart places a bid"
    assert say("skull-king", bid, viewer=1) == "Bart bids 2 tricks"
    assert say("skull-king", bid, viewer=1, lang="pl") == "Bart deklaruje 2 lewy"


def test_polish_counts_take_the_right_plural_form() -> None:
    started = [say("skull", ke.ChallengeStarted(seat=0, bid=n), lang="pl") for n in (1, 2, 5, 12, 22)]
    assert [s.split("odkryć ")[1] for s in started] == [
        "1 kwiat",
        "2 kwiaty",
        "5 kwiatów",
        "12 kwiatów",
        "22 kwiaty",
    ]


def test_the_table_events_and_the_lifecycle_events_read_as_sentences() -> None:
    assert say("skull", PlayerJoined(seat=1, name="Bart", client_seed="")) == "Bart takes seat 2"
    assert say("skull", GameFinished(scores=[2, 0, 1, 0], winners=[0])) == (
        "Game over: Ada wins; scores: Ada 2, Bart 0, Cleo 1, Dan 0"
    )
    assert say("skull", GameFinished(scores=[1, 1], winners=[0, 1])).startswith("Game over: Ada and Bart win")
    assert say("skull", {"type": "bot_took_over", "seat": 2, "reason": "timeouts"}) == (
        "A bot takes over from Cleo (too many timeouts)"
    )
    assert say("skull", {"type": "turn_timed_out", "seat": 0}, lang="fr") == "Temps écoulé pour Ada"
    assert say("skull", {"type": "table_expired"}, lang="tr") == "Masanın süresi doldu"


def test_a_seat_beyond_the_names_is_seat_n_counted_from_one() -> None:
    assert narrate("skull", {"type": "bid_made", "seat": 5, "count": 2}, NAMES) == "Seat 6 bids 2"
    assert narrate("skull", {"type": "bid_made", "seat": 5, "count": 2}, [], "pl") == "Miejsce 6 licytuje 2"


def test_an_unknown_language_reads_as_english_and_an_unknown_event_as_its_tag() -> None:
    event = {"type": "bid_made", "version": 9, "seat": 0, "count": 3}
    assert narrate("skull", event, NAMES, "de") == "Ada bids 3"
    assert narrate("skull", {"type": "something_new", "seat": 0}, NAMES) == "something_new"
    assert not narrates("skull", "something_new")


# -- who acted ----------------------------------------------------------------------------------


def test_a_bot_and_a_timeout_show_in_the_sentence_of_the_seats_own_action() -> None:
    bid = {"type": "bid_made", "seat": 0, "count": 3}
    assert narrate("skull", bid, NAMES, by="bot") == "Ada (bot) bids 3"
    assert narrate("skull", bid, NAMES, by="player") == narrate("skull", bid, NAMES) == "Ada bids 3"
    played = {"type": "card_played", "seat": 0, "card": "yellow-3", "as": None}
    assert narrate("skull-king", played, NAMES, by="timeout") == "Ada ran out of time: plays yellow 3"
    assert narrate("skull-king", played, NAMES, "pl", by="bot") == "Ada (bot) zagrywa: żółta 3"
    assert narrate(
        "six-nimmt", {"type": "card_selected", "seat": 1, "card": None}, NAMES, "fr", by="timeout"
    ) == ("Temps écoulé pour Bart : choisit une carte")


BOT = {"en": "bot", "pl": "bot", "fr": "robot", "tr": "bot"}  # the page's word for a bot, as the log's


def own_actions(game: str) -> list[tuple[Event, bool]]:
    """Every played event of ``game`` (the table's too) with whether it is a seat's own action: the
    first event a seat's command makes, about that seat ("Ada bids 3"); its consequences, other
    seats' and the table's events are not."""
    return [
        (event, seat is not None and index == 0 and getattr(event, "seat", None) == seat)
        for seat, events in ((step.seat, step.events) for step in steps(game))
        for index, event in enumerate(events)
    ]


@pytest.mark.parametrize("game", game_names())
@pytest.mark.parametrize("lang", LANGUAGES)
def test_by_marks_every_kind_of_own_action_in_every_language_and_nothing_else(game: str, lang: str) -> None:
    played = own_actions(game)
    assert any(own for _, own in played), f"{game}: no seat's own action was played"
    for event, own in played + [(event, False) for event in TABLE_SAMPLES]:
        plain = narrate(game, shown(event), NAMES, lang)
        bot = narrate(game, shown(event), NAMES, lang, by="bot")
        late = narrate(game, shown(event), NAMES, lang, by="timeout")
        if own:
            assert f"({BOT[lang]})" in bot and late not in (plain, bot), (game, event)
        else:
            assert plain == bot == late, (game, event)


# -- nothing hidden leaks -----------------------------------------------------------------------


def scrambled(event: Event, viewer: int, rng: random.Random) -> Event:
    """``event`` with everything ``viewer`` may not see (docs/rules.md, independently of ``redact``)
    replaced by other values of its kind."""
    replace = msgspec.structs.replace
    seat = getattr(event, "seat", None)
    if isinstance(event, ke.DiscPlaced | ke.DiscLost) and seat != viewer and event.disc != "last_chance":
        return replace(event, disc="flower" if event.disc == "skull" else "skull")
    if isinstance(event, ke.DiscsShuffled) and event.order is not None:
        return replace(event, order=tuple(rng.choice(["flower", "skull"]) for _ in event.order))
    if isinstance(event, se.CardSelected) and seat != viewer and event.card is not None:
        return replace(event, card=event.card % 104 + 1)
    if isinstance(event, ve.BidPlaced) and seat != viewer and event.tricks is not None:
        return replace(event, tricks=event.tricks + 1)
    if isinstance(event, se.CardsDealt):
        hands = tuple(
            h if s == viewer or h is None else tuple(c % 104 + 1 for c in h)
            for s, h in enumerate(event.hands)
        )
        return replace(event, hands=hands, unused=(*reversed(event.unused or ()), 1))
    if isinstance(event, ve.CardsDealt):
        hands = tuple(
            h if s == viewer or h is None else tuple(rng.sample(DECK, len(h)))
            for s, h in enumerate(event.hands)
        )
        return replace(event, hands=hands, unused=(*rng.sample(DECK, 3),))
    return event


def check_narration(game: str, events: list[Event], rng: random.Random, viewer: int) -> None:
    """Each event as ``viewer`` receives it reads the same whatever ``viewer`` may not know, and an
    event with a secret of another seat reads differently once the game is over and all is shown."""
    table = table_for(game)
    for event in events:
        seen = table.redact(event, viewer, finished=False)
        twin = scrambled(event, viewer, rng)
        for lang in LANGUAGES:
            sentence = assert_sentence(game, shown(seen), lang)
            assert narrate(game, shown(table.redact(twin, viewer, finished=False)), NAMES, lang) == sentence
            after = assert_sentence(game, shown(table.redact(event, viewer, finished=True)), lang)
            if (
                isinstance(twin, ke.DiscPlaced | ke.DiscLost | se.CardSelected | ve.BidPlaced)
                and twin != event
            ):
                assert after != sentence, f"{lang}: {event} should name its secret once the game is over"


GAMES = settings(max_examples=8, deadline=None)


@GAMES
@given(players=hs.integers(3, 6), options=SKULL_OPTIONS, seed=hs.integers(0, 2**32), viewer=hs.integers(0, 2))
def test_narrating_a_skull_game_for_a_seat_never_tells_what_the_seat_may_not_see(
    players: int, options: dict[str, Any], seed: int, viewer: int
) -> None:
    g = play_random(
        new_game("skull", players, table_options(options, players), seed=seed), random.Random(seed)
    )
    check_narration("skull", g.events, random.Random(seed), viewer)


@GAMES
@given(players=hs.integers(2, 6), options=SIX_OPTIONS, seed=hs.integers(0, 2**32), viewer=hs.integers(0, 1))
def test_narrating_a_six_nimmt_game_for_a_seat_never_tells_what_the_seat_may_not_see(
    players: int, options: dict[str, Any], seed: int, viewer: int
) -> None:
    g = play_random(new_game("six-nimmt", players, options, seed=seed), random.Random(seed))
    check_narration("six-nimmt", g.events, random.Random(seed), viewer)


@pytest.mark.thorough
@GAMES
@given(players=hs.integers(2, 6), seed=hs.integers(0, 2**32), viewer=hs.integers(0, 1))
def test_narrating_a_skull_king_game_for_a_seat_never_tells_what_the_seat_may_not_see(
    players: int, seed: int, viewer: int
) -> None:
    g = play_random(new_game("skull-king", players, seed=seed), random.Random(seed))
    check_narration("skull-king", g.events, random.Random(seed), viewer)


# -- Accept-Language ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header,expected",
    [
        ("pl-PL,pl;q=0.9,en;q=0.8", "pl"),
        ("fr-CA", "fr"),
        (None, "en"),
        ("", "en"),
        ("de-DE,de;q=0.9", "en"),
        ("*", "en"),
        ("de, tr;q=0.5, fr;q=0.7", "fr"),
        ("TR-tr", "tr"),
        ("fr;q=0, pl;q=0.1", "pl"),
        ("en;q=abc, fr;q=0.2", "fr"),
        (";;,,", "en"),
    ],
)
def test_pick_language_takes_the_best_supported_language_of_the_header(
    header: str | None, expected: str
) -> None:
    assert pick_language(header) == expected


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_hint_names_the_suggested_move_only_where_the_viewer_may_see_it(lang: str) -> None:
    hidden = narrate("skull-king", {"type": "hint_given", "seat": 1}, NAMES, lang)
    shown = narrate(
        "skull-king",
        {"type": "hint_given", "seat": 1, "command": {"type": "bid", "tricks": 2}},
        NAMES,
        lang,
    )
    assert NAMES[1] in hidden and NAMES[1] in shown
    assert "2" not in hidden and "2" in shown


@pytest.mark.parametrize("game", game_names())
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_command_a_hint_may_suggest_is_said_in_words_not_by_its_wire_name(game: str, lang: str) -> None:
    samples = command_samples(game)
    assert {sample["type"] for sample in samples} == command_tags(game)  # every command was played
    for command in samples:
        said = narrate(game, {"type": "hint_given", "seat": 0, "command": command}, NAMES, lang)
        assert "_" not in said and not PLACEHOLDER.search(said), (command, said)


@pytest.mark.parametrize(
    ("lang", "turn_seconds", "expire_minutes", "said"),
    [
        ("en", 86_400, 1_440, "Turns last 1 day; an unfilled table expires after 1 day"),
        ("en", 45, 30, "Turns last 45 seconds; an unfilled table expires after 30 minutes"),
        ("en", 60, 1, "Turns last 1 minute; an unfilled table expires after 1 minute"),
        ("en", 7_200, 90, "Turns last 2 hours; an unfilled table expires after 90 minutes"),
        ("fr", 172_800, 1_440, "Tour de 2 jours ; une table incomplète expire après 1 jour"),
        ("pl", 86_400, 30, "Czas na turę: 1 dzień; niezapełniony stół czeka na graczy: 30 minut"),
        ("tr", 3_600, 1_440, "Her tur 1 saat sürer; dolmayan masa 1 gün sonra kapanır"),
    ],
)
def test_a_tables_timers_read_in_the_largest_whole_unit_of_time(
    lang: str, turn_seconds: int, expire_minutes: int, said: str
) -> None:
    event = {"type": "table_timers_set", "turn_seconds": turn_seconds, "expire_minutes": expire_minutes}
    assert narrate("skull", event, NAMES, lang) == said
