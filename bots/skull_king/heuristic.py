"""A Skull King bot: bids what its hand looks worth, then plays to make exactly that bid.

It reads only its own seat's view (``GET /games/{id}/view``): hand, own bid, tricks won and the
trick on the table. The trick-winner rules come from the domain's pure functions, applied to the
public cards in the view, so the bot never guesses a rule differently from the server.
"""

from __future__ import annotations

import random
from typing import Any

from domain.skull_king.cards import effective_kind, info
from domain.skull_king.state import Play
from domain.skull_king.tricks import winning_index

Command = dict[str, Any]

_SPECIAL_POWER = {"escape": 0, "mermaid": 40, "pirate": 50, "skull-king": 60}
_SPECIAL_SHARE = {"skull-king": 0.97, "pirate": 0.9, "scary-mary": 0.9, "mermaid": 0.88, "escape": 0.0}


def power(card: str, declared: Any = None) -> int:
    """A rough total order of strength: Escape < plain 1-13 < black 1-13 < Mermaid < Pirate < Skull King."""
    kind = effective_kind(card, declared)
    if kind != "number":
        return _SPECIAL_POWER[kind]
    card_info = info(card)
    return card_info.rank + (20 if card_info.suit == "black" else 0)


def beaten_share(card: str) -> float:
    """Roughly how often this card beats one other player's card, from the 66-card deck's make-up.

    A black 13 loses only to the 9 characters; a plain card also loses to black and to higher cards
    of its suit, and low plain cards rarely survive a suit being followed.
    """
    card_info = info(card)
    if card_info.kind == "number":
        if card_info.suit == "black":
            return 0.5 + 0.028 * card_info.rank
        return 0.3 + 0.033 * card_info.rank
    return _SPECIAL_SHARE[card_info.kind]


def trick_chance(card: str, players: int) -> float:
    """How likely the card takes a trick: it must beat the card of every other player."""
    return beaten_share(card) ** (players - 1)


def choose_bid(view: dict[str, Any], legal: list[Command], rng: random.Random) -> Command:
    """The legal bid nearest to the hand's expected tricks (ties broken at random)."""
    players = len(view.get("tricks_won") or []) or 2
    expected = sum(trick_chance(card, players) for card in view.get("hand") or [])
    return min(legal, key=lambda c: (abs(c["tricks"] - expected), rng.random()))


def _wins_now(view: dict[str, Any], command: Command) -> bool:
    """Whether the card would lead the trick as it stands once played (later players may still beat it)."""
    trick = [Play(seat=p["seat"], card=p["card"], as_=p.get("as")) for p in view.get("trick") or []]
    trick.append(Play(seat=view.get("seat") or 0, card=command["card"], as_=command.get("as")))
    return winning_index(trick) == len(trick) - 1


def choose_card(view: dict[str, Any], legal: list[Command], rng: random.Random) -> Command:
    """Chase tricks while short of the bid, shed them once it is made."""
    seat = view.get("seat") or 0
    won = (view.get("tricks_won") or [0] * (seat + 1))[seat]
    need = (view.get("own_bid") or 0) - won
    players = len(view.get("tricks_won") or []) or 2
    last = len(view.get("trick") or []) == players - 1

    def strength(command: Command) -> tuple[int, float]:
        return power(command["card"], command.get("as")), rng.random()

    winners = [c for c in legal if _wins_now(view, c)]
    losers = [c for c in legal if c not in winners]
    if need > 0:
        if winners:
            return min(winners, key=strength) if last else max(winners, key=strength)
        return min(legal, key=strength)
    if losers:
        return max(losers, key=strength)
    return min(legal, key=strength)


def choose(view: dict[str, Any], rng: random.Random) -> Command:
    """One of ``view["legal"]``: a bid when bidding, otherwise a card."""
    legal: list[Command] = list(view.get("legal") or [])
    if not legal:
        raise ValueError("the bot was asked to act with no legal command")
    bids = [c for c in legal if c.get("type") == "bid"]
    if bids:
        return choose_bid(view, bids, rng)
    return choose_card(view, [c for c in legal if c.get("type") == "play_card"] or legal, rng)


def reason(view: dict[str, Any], command: Command) -> tuple[str, dict[str, Any]] | None:
    """Why: a bid is the count of cards likely to win a trick (glossary ``bot.reason.*``)."""
    if command.get("type") == "bid":
        return "bot.reason.bid_likely_winners", {"n": int(command["tricks"])}
    return None
