"""High Card's decisions: the deal, and playing a card (a trick, a round, the next deal)."""

from __future__ import annotations

from domain.fairness import Chance
from domain.kernel import Deciders, Rejected, Seat, Unfolding
from tests.games.high_card.rules.commands import PlayCard
from tests.games.high_card.rules.events import CardPlayed, CardsDealt, HighCardEvent, RoundScored, TrickWon
from tests.games.high_card.rules.evolve import EVOLVERS
from tests.games.high_card.rules.state import DECK, HAND, HighCardState


def _deal(state: HighCardState, chance: Chance, round_number: int, leader: int) -> CardsDealt:
    deck = chance.shuffle(round_number, "deal", DECK)
    hands = tuple(tuple(sorted(deck[s * HAND : (s + 1) * HAND])) for s in range(state.players))
    return CardsDealt(
        round=round_number, leader=leader, hands=hands, set_aside=tuple(deck[state.players * HAND :])
    )


def start(state: HighCardState, chance: Chance) -> list[HighCardEvent]:
    return [_deal(state, chance, 1, 0)]


def _admit(state: HighCardState, seat: Seat) -> None:
    if state.phase != "playing":
        raise Rejected("wrong_phase", "The game is not being played.")
    if state.turn() != seat:
        raise Rejected("not_your_turn", "Another seat plays now.")


def play_card(state: HighCardState, command: PlayCard, seat: Seat, chance: Chance) -> list[HighCardEvent]:
    if command.card not in state.hands[seat]:
        raise Rejected("card_not_in_hand", f"Card {command.card} is not in your hand.")
    unfolding: Unfolding[HighCardState, HighCardEvent] = Unfolding(EVOLVERS, state)
    unfolding.add(CardPlayed(seat=seat, card=command.card))
    now = unfolding.state
    if len(now.trick) < now.players:
        return unfolding.events
    winner, card = max(now.trick, key=lambda play: play[1])
    unfolding.add(TrickWon(seat=winner, card=card))
    now = unfolding.state
    if any(now.hands):
        return unfolding.events
    totals = tuple(total + taken for total, taken in zip(now.totals, now.taken, strict=True))
    unfolding.add(RoundScored(round=now.round, points=now.taken, totals=totals))
    if now.round < now.options.rounds:
        next_round = now.round + 1
        unfolding.add(_deal(now, chance, next_round, (next_round - 1) % now.players))
    return unfolding.events


DECIDERS: Deciders[HighCardState, HighCardEvent] = Deciders("High Card", {PlayCard: play_card}, admit=_admit)
