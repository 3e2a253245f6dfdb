"""The Skull King Decider: ten rounds of hidden simultaneous bids and tricks (shared/RULES.md).

Chance is used twice, always through the ``Chance`` handed in and always recorded in an event:
``uniform(1, "first-dealer", players)`` in ``start`` and ``shuffle(r, "deal", DECK)`` for round r.

Dealing order: from the shuffled deck, one card at a time clockwise, starting with the seat left of
the dealer, until each seat holds r cards: card i goes to seat ``(dealer + 1 + i) % players``. The
cards from index ``r * players`` on stay unused, in shuffled order.
"""

from __future__ import annotations

import msgspec

from domain.fairness import Chance
from domain.kernel import Rejected, Seat
from domain.skull_king.cards import DECK, DECLARATIONS, SCARY_MARY, is_card, suit_of
from domain.skull_king.commands import Bid, PlayCard, SkullKingCommand
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
from domain.skull_king.options import MAX_PLAYERS, MIN_PLAYERS, ROUNDS, SkullKingOptions
from domain.skull_king.scoring import bonus_counted, round_score
from domain.skull_king.state import Play, SkullKingState, TakenTrick
from domain.skull_king.tricks import lead_suit, may_play, playable, trick_bonus, winning_index

replace = msgspec.structs.replace


def _set(values: tuple[int, ...], seat: int, value: int) -> tuple[int, ...]:
    return (*values[:seat], value, *values[seat + 1 :])


def deal(players: int, round_number: int, dealer: Seat, chance: Chance) -> CardsDealt:
    """Shuffle the whole deck for the round and deal it in the documented order."""
    deck = chance.shuffle(round_number, "deal", DECK)
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


# -- deciding ----------------------------------------------------------------------------------


def decide_bid(state: SkullKingState, command: Bid, seat: Seat) -> list[SkullKingEvent]:
    """A hidden bid of 0..r; the last one in reveals all of them in the same batch."""
    if state.phase != "bidding":
        raise Rejected("wrong_phase", "Bids are made only after the deal, before the first card of a round.")
    if state.bids[seat] is not None:
        raise Rejected("already_bid", "You have already bid this round; a bid is final.")
    if not 0 <= command.tricks <= state.round:
        raise Rejected(
            "illegal_bid", f"A bid in round {state.round} is a number of tricks from 0 to {state.round}."
        )
    events: list[SkullKingEvent] = [BidPlaced(seat=seat, tricks=command.tricks)]
    bids = tuple(command.tricks if s == seat else bid for s, bid in enumerate(state.bids))
    if all(bid is not None for bid in bids):
        events.append(BidsRevealed(bids=tuple(bid for bid in bids if bid is not None)))
    return events


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


def decide_play(state: SkullKingState, command: PlayCard, seat: Seat, chance: Chance) -> list[SkullKingEvent]:
    """Play a card; a full trick is taken, the last trick scores the round, the next round is dealt."""
    if state.phase != "playing":
        raise Rejected("wrong_phase", "Cards are played only once every bid of the round is in.")
    if state.turn() != seat:
        raise Rejected("not_your_turn", f"It is seat {state.turn()}'s turn to play a card.")
    _check_card(state, command, seat)
    events: list[SkullKingEvent] = [CardPlayed(seat=seat, card=command.card, as_=command.as_)]
    trick = (*state.trick, Play(seat=seat, card=command.card, as_=command.as_))
    if len(trick) < state.players:
        return events
    events.append(take_trick(state, trick))
    if len(state.taken) + 1 < state.round:
        return events
    return events + end_round(state, events, chance)


def take_trick(state: SkullKingState, trick: tuple[Play, ...]) -> TrickWon:
    """The complete trick goes to the winning card's player, with what it may earn as a bonus."""
    winner = winning_index(trick)
    return TrickWon(
        trick=len(state.taken) + 1,
        winner=trick[winner].seat,
        card=trick[winner].card,
        bonus=trick_bonus(trick, winner, state.options),
    )


def end_round(state: SkullKingState, events: list[SkullKingEvent], chance: Chance) -> list[SkullKingEvent]:
    """Score the round once ``events`` (its last card and trick) are applied; deal the next one."""
    after = state
    for event in events:
        after = evolve(after, event)
    ending: list[SkullKingEvent] = [score_round(after)]
    if state.round < ROUNDS:
        ending.append(deal(state.players, state.round + 1, (state.dealer + 1) % state.players, chance))
    return ending


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


# -- evolving ----------------------------------------------------------------------------------


def _dealt(state: SkullKingState, event: CardsDealt) -> SkullKingState:
    zeros = (0,) * state.players
    return replace(
        state,
        phase="bidding",
        round=event.round,
        dealer=event.dealer,
        leader=event.leader,
        hands=tuple(hand or () for hand in event.hands),
        unused=event.unused or (),
        bids=(None,) * state.players,
        bids_revealed=False,
        trick=(),
        taken=(),
        won=zeros,
        bonuses=zeros,
    )


def _played(state: SkullKingState, event: CardPlayed) -> SkullKingState:
    hands = tuple(
        tuple(card for card in hand if card != event.card) if seat == event.seat else hand
        for seat, hand in enumerate(state.hands)
    )
    return replace(
        state, hands=hands, trick=(*state.trick, Play(seat=event.seat, card=event.card, as_=event.as_))
    )


def _taken(state: SkullKingState, event: TrickWon) -> SkullKingState:
    taken = TakenTrick(leader=state.leader, plays=state.trick, winner=event.winner, bonus=event.bonus)
    return replace(
        state,
        taken=(*state.taken, taken),
        trick=(),
        leader=event.winner,
        won=_set(state.won, event.winner, state.won[event.winner] + 1),
        bonuses=_set(state.bonuses, event.winner, state.bonuses[event.winner] + event.bonus),
    )


def _scored(state: SkullKingState, event: RoundScored) -> SkullKingState:
    phase = "finished" if event.round >= ROUNDS else "scoring"
    return replace(state, history=(*state.history, event), totals=event.totals, phase=phase)


def evolve(state: SkullKingState, event: SkullKingEvent) -> SkullKingState:
    """Record one fact; never validates, never draws."""
    if isinstance(event, FirstDealerChosen):
        return replace(state, dealer=event.seat)
    if isinstance(event, CardsDealt):
        return _dealt(state, event)
    if isinstance(event, BidPlaced):
        bids = tuple(event.tricks if s == event.seat else bid for s, bid in enumerate(state.bids))
        return replace(state, bids=bids)
    if isinstance(event, BidsRevealed):
        return replace(state, bids=tuple(event.bids), bids_revealed=True, phase="playing")
    if isinstance(event, CardPlayed):
        return _played(state, event)
    if isinstance(event, TrickWon):
        return _taken(state, event)
    return _scored(state, event)


# -- the Rules object --------------------------------------------------------------------------


class SkullKingRules:
    """``domain.kernel.Rules`` for Skull King; stateless, so one shared instance serves every table."""

    name = "skull-king"
    options_type = SkullKingOptions
    command_type = SkullKingCommand
    event_type = SkullKingEvent
    state_type = SkullKingState

    def check_options(self, options: SkullKingOptions, players: int) -> None:
        if not isinstance(options, SkullKingOptions):
            raise Rejected("invalid_options", "These are not Skull King table options.")
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise Rejected(
                "bad_player_count", f"Skull King is played by {MIN_PLAYERS} to {MAX_PLAYERS} players."
            )

    def initial_state(self, options: SkullKingOptions, players: int) -> SkullKingState:
        return SkullKingState(options=options, players=players, totals=(0,) * players)

    def start(self, state: SkullKingState, chance: Chance) -> list[SkullKingEvent]:
        """Draw the first dealer (a round-1 draw) and deal round 1."""
        dealer = chance.uniform(1, "first-dealer", state.players)
        return [FirstDealerChosen(seat=dealer), deal(state.players, 1, dealer, chance)]

    def decide(
        self, state: SkullKingState, command: SkullKingCommand, seat: Seat, chance: Chance
    ) -> list[SkullKingEvent]:
        if isinstance(command, Bid):
            return decide_bid(state, command, seat)
        if isinstance(command, PlayCard):
            return decide_play(state, command, seat, chance)
        raise Rejected("unknown_command", "Skull King knows only the commands bid and play_card.")

    def evolve(self, state: SkullKingState, event: SkullKingEvent) -> SkullKingState:
        return evolve(state, event)

    def is_terminal(self, state: SkullKingState) -> bool:
        return state.phase == "finished"

    def current_round(self, state: SkullKingState) -> int:
        return max(1, state.round)

    def rounds_completed(self, state: SkullKingState) -> int:
        """A round is completed once its ``round_scored`` is recorded."""
        return len(state.history)

    def withheld_rounds(self, state: SkullKingState) -> frozenset[int]:
        """None: every dealt card is played by the end of a round; the unused cards a seed would expose are
        hidden by no rule."""
        return frozenset()

    def phase(self, state: SkullKingState) -> str:
        return state.phase

    def to_act(self, state: SkullKingState) -> list[Seat]:
        if state.phase == "bidding":
            return [seat for seat, bid in enumerate(state.bids) if bid is None]
        turn = state.turn()
        return [] if turn is None else [turn]

    def legal_commands(self, state: SkullKingState, seat: Seat) -> list[SkullKingCommand]:
        """Every bid 0..r while the seat has not bid; on its turn every playable card, Scary Mary twice."""
        if state.phase == "bidding" and state.bids[seat] is None:
            return [Bid(tricks=n) for n in range(state.round + 1)]
        if state.turn() != seat:
            return []
        commands: list[SkullKingCommand] = []
        for card in playable(state.hands[seat], state.trick, state.options):
            if card == SCARY_MARY:
                commands.extend(PlayCard(card=card, as_=declared) for declared in DECLARATIONS)
            else:
                commands.append(PlayCard(card=card))
        return commands

    def redact(self, event: SkullKingEvent, viewer: Seat | None) -> SkullKingEvent:
        """Other seats' hands, the unused cards and other seats' unrevealed bids become ``None``."""
        if isinstance(event, CardsDealt):
            hands = tuple(hand if seat == viewer else None for seat, hand in enumerate(event.hands))
            return replace(event, hands=hands, unused=None)
        if isinstance(event, BidPlaced) and event.seat != viewer:
            return replace(event, tricks=None)
        return event

    def scores(self, state: SkullKingState) -> list[int]:
        return list(state.totals)

    def winners(self, state: SkullKingState) -> list[Seat]:
        """Highest total after round 10; ties share."""
        if not self.is_terminal(state):
            return []
        best = max(state.totals)
        return [seat for seat, total in enumerate(state.totals) if total == best]


RULES = SkullKingRules()
