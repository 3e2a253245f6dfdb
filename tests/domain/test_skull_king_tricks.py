"""Skull King: who takes a trick, and what may be played to it (docs/rules.md "Who takes a trick")."""

from __future__ import annotations

from typing import cast

import pytest

from domain.skull_king.cards import Declaration
from domain.skull_king.options import SkullKingOptions
from domain.skull_king.state import Play
from domain.skull_king.tricks import lead_suit, may_play, playable, winning_index

DEFAULT = SkullKingOptions()
NO_SUIT = SkullKingOptions(character_lead_no_suit=True)


def plays(*cards: str) -> list[Play]:
    """A trick in play order, seat i playing the i-th card; ``scary-mary:escape`` declares her."""
    out = []
    for seat, spec in enumerate(cards):
        card, _, declared = spec.partition(":")
        out.append(Play(seat=seat, card=card, as_=cast(Declaration | None, declared or None)))
    return out


def winner(*cards: str) -> str:
    trick = plays(*cards)
    return trick[winning_index(trick)].card


# -- trick winner ------------------------------------------------------------------------------


def test_the_highest_card_of_the_lead_suit_wins_a_plain_trick() -> None:
    assert winner("yellow-5", "yellow-9", "red-13", "blue-12") == "yellow-9"


def test_black_beats_every_plain_suit_and_the_highest_black_wins() -> None:
    assert winner("yellow-13", "black-1", "red-13") == "black-1"
    assert winner("black-3", "yellow-13", "black-11", "black-4") == "black-11"


def test_a_mermaid_beats_every_numbered_card() -> None:
    assert winner("black-13", "mermaid-1", "yellow-13") == "mermaid-1"


def test_a_pirate_beats_a_mermaid() -> None:
    assert winner("mermaid-1", "pirate-3", "black-13") == "pirate-3"


def test_the_first_pirate_beats_the_later_pirates() -> None:
    assert winner("yellow-2", "pirate-4", "pirate-1", "pirate-2") == "pirate-4"


def test_the_skull_king_beats_pirates() -> None:
    assert winner("pirate-1", "skull-king", "pirate-2") == "skull-king"


def test_a_mermaid_takes_the_skull_king_even_with_pirates_in_the_trick() -> None:
    assert winner("pirate-1", "skull-king", "pirate-2", "mermaid-2") == "mermaid-2"


def test_mermaid_black_seven_skull_king_is_won_by_the_mermaid() -> None:
    assert winner("mermaid-1", "black-7", "skull-king") == "mermaid-1"


def test_of_two_mermaids_the_first_wins() -> None:
    assert winner("mermaid-2", "mermaid-1", "black-13") == "mermaid-2"
    assert winner("yellow-1", "mermaid-2", "skull-king", "mermaid-1") == "mermaid-2"


def test_only_escapes_give_the_trick_to_the_first_card_played() -> None:
    trick = plays("escape-3", "escape-1", "scary-mary:escape", "escape-5")
    assert winning_index(trick) == 0


def test_an_escape_led_then_a_numbered_card_is_won_by_the_numbered_card() -> None:
    assert winner("escape-1", "yellow-2") == "yellow-2"


def test_after_an_escape_lead_the_first_numbered_card_sets_the_suit_to_beat() -> None:
    assert winner("escape-1", "red-2", "yellow-13", "red-9") == "red-9"


def test_scary_mary_as_pirate_beats_a_mermaid_and_counts_as_a_pirate_in_play_order() -> None:
    assert winner("mermaid-1", "scary-mary:pirate") == "scary-mary"
    assert winner("scary-mary:pirate", "pirate-1") == "scary-mary"
    assert winner("pirate-1", "scary-mary:pirate") == "pirate-1"


def test_scary_mary_as_escape_loses_to_the_lowest_numbered_card() -> None:
    assert winner("scary-mary:escape", "yellow-1") == "yellow-1"


def test_scary_mary_as_pirate_loses_to_the_skull_king() -> None:
    assert winner("scary-mary:pirate", "skull-king") == "skull-king"


# -- following ---------------------------------------------------------------------------------


def test_special_cards_are_always_allowed_even_when_holding_the_lead_suit() -> None:
    hand = ["yellow-3", "escape-1", "pirate-1", "mermaid-1", "scary-mary", "skull-king"]
    trick = plays("yellow-5")
    assert playable(hand, trick, DEFAULT) == tuple(hand)


def test_black_may_not_be_played_while_holding_the_lead_suit() -> None:
    hand = ["yellow-3", "black-9", "red-2"]
    assert playable(hand, plays("yellow-5"), DEFAULT) == ("yellow-3",)


def test_a_player_holding_black_must_follow_a_black_lead() -> None:
    hand = ["yellow-3", "black-9"]
    assert playable(hand, plays("black-2"), DEFAULT) == ("black-9",)


def test_a_player_void_in_the_lead_suit_may_play_anything() -> None:
    hand = ["red-1", "black-9", "blue-13", "escape-2"]
    assert playable(hand, plays("yellow-5"), DEFAULT) == tuple(hand)


def test_the_leader_may_play_any_card() -> None:
    hand = ["red-1", "black-9", "pirate-2"]
    assert playable(hand, [], DEFAULT) == tuple(hand)
    assert playable(hand, [], NO_SUIT) == tuple(hand)


def test_by_default_the_first_numbered_card_sets_the_suit_even_after_specials() -> None:
    trick = plays("pirate-1", "escape-2", "red-4")
    assert lead_suit(trick, DEFAULT) == "red"
    assert not may_play(["red-7", "blue-9"], "blue-9", trick, DEFAULT)


def test_by_default_a_character_led_leaves_the_suit_to_the_next_numbered_card() -> None:
    assert lead_suit(plays("skull-king"), DEFAULT) is None
    assert lead_suit(plays("mermaid-1", "blue-4"), DEFAULT) == "blue"


@pytest.mark.parametrize("led", ["pirate-2", "mermaid-1", "skull-king", "scary-mary:pirate"])
def test_with_character_lead_no_suit_a_character_led_means_no_suit_this_trick(led: str) -> None:
    trick = plays(led, "blue-4")
    assert lead_suit(trick, NO_SUIT) is None
    assert may_play(["blue-7", "red-9"], "red-9", trick, NO_SUIT)
    assert not may_play(["blue-7", "red-9"], "red-9", trick, DEFAULT)


def test_with_character_lead_no_suit_a_numbered_lead_still_sets_the_suit() -> None:
    trick = plays("blue-4", "pirate-1")
    assert lead_suit(trick, NO_SUIT) == "blue"
    assert not may_play(["blue-7", "red-9"], "red-9", trick, NO_SUIT)


def test_with_character_lead_no_suit_an_escape_led_passes_the_lead_to_the_next_card() -> None:
    assert lead_suit(plays("escape-1", "yellow-3", "pirate-1"), NO_SUIT) == "yellow"
    assert lead_suit(plays("scary-mary:escape", "yellow-3"), NO_SUIT) == "yellow"
    assert lead_suit(plays("escape-1", "pirate-1", "yellow-3"), NO_SUIT) is None
