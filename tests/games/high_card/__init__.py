"""High Card: the tests' own fourth game, a whole game in one package and nothing else.

It proves on every run that a game needs only its own package: the tests register ``SPEC`` through
``domain.games.register`` (``tests/conftest.py``, and ``TABLESTREAM_EXTRA_GAMES`` for the servers
the tests start), and the generic suites (rules properties, hidden information, views at every
version, replay index, narration, verify/audit/export, bots at every level, the default browser
board) then run it like the three real games, with no line about it anywhere else.

The rules, small on purpose but with every kind of secret: each round the deck 1..24 is shuffled,
every seat is dealt three cards (hidden from the others) and the rest is set aside face down
(hidden from everyone). The leader plays a card, the others follow in seat order with any card;
the highest card takes the trick and leads the next. After three tricks each trick taken is a
point; after ``rounds`` rounds (2 by default) the most points win, ties share.
"""

from domain.spec import GameSpec, ReplayCut
from tests.games.high_card.rules import MAX_PLAYERS, MIN_PLAYERS, RULES

SPEC = GameSpec(
    name="high-card",
    title="High Card",
    blurb="24 ▲",
    package="high_card",
    rules=RULES,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    default_players=3,
    replay_cut=ReplayCut(
        round_opens=frozenset({"cards_dealt"}),
        round_ends=frozenset({"round_scored"}),
        step_opens={"cards_dealt": "trick", "card_played": "trick"},
        step_closes=frozenset({"trick_won"}),
    ),
    draws={"deal": "each round: a shuffle of 1..24; seat s gets cards [3s, 3s + 3), the rest is set aside"},
    option_notes={"rounds": "How many rounds are played; three tricks a round."},
    rules_module="tests.games.high_card.rules",
    views_module="tests.games.high_card.views",
    bot_module="tests.games.high_card.bot",
)
