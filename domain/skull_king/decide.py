"""One small function per Skull King command, the opening draw and the deal.

Chance is used twice, always through the ``Chance`` handed in and always recorded in an event:
``uniform(1, "first-dealer", players)`` in ``start`` and ``shuffle(r, "deal", DECK)`` for round r.

Dealing order: from the shuffled deck, one card at a time clockwise, starting with the seat left of
the dealer, until each seat holds r cards: card i goes to seat ``(dealer + 1 + i) % players``. The
cards from index ``r * players`` on stay unused, in shuffled order.
"""

from __future__ import annotations

from domain.fairness import Chance
from domain.kernel import Deciders, Rejected, Seat, Unfolding
from domain.skull_king.cards import DECK, DECLARATIONS, SCARY_MARY, is_card, suit_of
from domain.skull_king.commands import Bid, PlayCard
from domain.skull_king.events import (
    BidPlaced,
    BidsRevealed,
    CardPlayed,
    CardsDealt,
    FirstDealerChosen,
    RoundScored,
    SkullKingEvent,
    TrickWon,
)
from domain.skull_king.evolve import EVOLVERS
from domain.skull_king.options import ROUNDS
from domain.skull_king.scoring import bonus_counted, round_score
from domain.skull_king.state import SkullKingState
from domain.skull_king.tricks import lead_suit, may_play, trick_bonus, winning_index

FIRST_DEALER_LABEL = "first-dealer"
DEAL_LABEL = "deal"

Batch = Unfolding[SkullKingState, SkullKingEvent]
"""The events of one command so far and the state they lead to."""


def start(state: SkullKingState, chance: Chance) -> list[SkullKingEvent]:
    """Draw the first dealer (a round-1 draw) and deal round 1."""
    dealer = chance.uniform(1, FIRST_DEALER_LABEL, state.players)
    return [FirstDealerChosen(seat=dealer), deal(state.players, 1, dealer, chance)]


def deal(players: int, round_number: int, dealer: Seat, chance: Chance) -> CardsDealt:
    """Shuffle the whole deck for the round and deal it in the documented order."""
    deck = chance.shuffle(round_number, DEAL_LABEL, DECK)
    dealt = round_number * players
    hands: list[list[str]] = [[] for _ in range(players)]
    for i, card in enumerate(deck[:dealt]):
        hands[(dealer + 1 + i) % players].append(card)
    return CardsDealt(
        round=round_number,
        dealer=dealer,
        leader=(dealer + 1) % players,
        hands=tuple(tuple(hand) for hand in hands),
        unused=tuple(deck[dealt:]),
    )


def _bid(state: SkullKingState, command: Bid, seat: Seat, chance: Chance) -> list[SkullKingEvent]:
    """A hidden bid of 0..r; the last one in reveals all of them in the same batch."""
    if state.phase != "bidding":
        raise Rejected("wrong_phase", "Bids are made only after the deal, before the first card of a round.")
    if state.bids[seat] is not None:
        raise Rejected("already_bid", "You have already bid this round; a bid is final.")
    if not 0 <= command.tricks <= state.round:
        raise Rejected(
            "illegal_bid", f"A bid in round {state.round} is a number of tricks from 0 to {state.round}."
        )
    batch = Unfolding(EVOLVERS, state).add(BidPlaced(seat=seat, tricks=command.tricks))
    bids = batch.state.bids
    if all(bid is not None for bid in bids):
        batch.add(BidsRevealed(bids=tuple(bid for bid in bids if bid is not None)))
    return batch.events


def _check_card(state: SkullKingState, command: PlayCard, seat: Seat) -> None:
    """Refuse a card the seat does not hold, a wrong declaration, or a failure to follow suit."""
    if not is_card(command.card):
        raise Rejected("unknown_card", f"There is no card {command.card!r} in Skull King.")
    hand = state.hands[seat]
    if command.card not in hand:
        raise Rejected("card_not_in_hand", f"You do not hold {command.card}.")
    if command.card == SCARY_MARY and command.as_ not in DECLARATIONS:
        raise Rejected("declaration_required", "Scary Mary must be played as a pirate or as an escape.")
    if command.card != SCARY_MARY and command.as_ is not None:
        raise Rejected("declaration_not_allowed", "Only Scary Mary is declared when played.")
    if not may_play(hand, command.card, state.trick, state.options):
        suit = lead_suit(state.trick, state.options)
        raise Rejected(
            "must_follow_suit",
            f"You hold {suit} cards, so you must play {suit} or a special card, not {suit_of(command.card)}.",
        )


def _play_card(state: SkullKingState, command: PlayCard, seat: Seat, chance: Chance) -> list[SkullKingEvent]:
    """Play a card; a full trick is taken, the last trick scores the round, the next round is dealt."""
    if state.phase != "playing":
        raise Rejected("wrong_phase", "Cards are played only once every bid of the round is in.")
    if state.turn() != seat:
        raise Rejected("not_your_turn", f"It is seat {state.turn()}'s turn to play a card.")
    _check_card(state, command, seat)
    batch = Unfolding(EVOLVERS, state).add(CardPlayed(seat=seat, card=command.card, as_=command.as_))
    if len(batch.state.trick) < state.players:
        return batch.events
    batch.add(take_trick(batch.state))
    if len(batch.state.taken) < state.round:
        return batch.events
    end_round(batch, chance)
    return batch.events


def take_trick(state: SkullKingState) -> TrickWon:
    """The complete trick on the table goes to the winning card's player, with what it may earn."""
    trick = state.trick
    winner = winning_index(trick)
    return TrickWon(
        trick=len(state.taken) + 1,
        winner=trick[winner].seat,
        card=trick[winner].card,
        bonus=trick_bonus(trick, winner, state.options),
    )


def end_round(batch: Batch, chance: Chance) -> None:
    """Score the round whose last trick was just taken; deal the next one, if any."""
    state = batch.state
    batch.add(score_round(state))
    if state.round < ROUNDS:
        batch.add(deal(state.players, state.round + 1, (state.dealer + 1) % state.players, chance))


def score_round(state: SkullKingState) -> RoundScored:
    """The score pad line of a round whose last trick has just been taken."""
    bids = tuple(bid if bid is not None else 0 for bid in state.bids)
    bonuses = tuple(bonus_counted(b, t, x) for b, t, x in zip(bids, state.won, state.bonuses, strict=True))
    scores = tuple(
        round_score(b, t, x, state.round, state.options.scoring)
        for b, t, x in zip(bids, state.won, bonuses, strict=True)
    )
    return RoundScored(
        round=state.round,
        bids=bids,
        tricks=state.won,
        bonuses=bonuses,
        scores=scores,
        totals=tuple(total + score for total, score in zip(state.totals, scores, strict=True)),
    )


DECIDERS: Deciders[SkullKingState, SkullKingEvent] = Deciders(
    "Skull King",
    {
        Bid: _bid,
        PlayCard: _play_card,
    },
)
