# ruff: noqa: RUF001 - the catalogs are prose in four languages (Polish dashes, Turkish dotless i)
"""One sentence per game event, as a seat may see it, in English, Polish, French and Turkish.

``narrate`` reads the builtins dict of an event exactly as the API returns it to a viewer
(``msgspec.to_builtins`` of the possibly redacted event, with ``type`` and maybe ``version``) and
says only what that dict holds: a hidden field is ``None`` and the sentence then stays vague
("Bart places a disc"), while the same event shown to its owner or after the game names it
("Bart places a skull"). The web client's game log and the CLI demo use the same sentences.

The wording is data: ``CATALOGS`` holds one flat dict per language, from a key to a ``str.format``
template with named placeholders; every language has exactly the same keys. The code below only
picks a key and computes the values of its placeholders. Seats and rows are numbered from 1 for
people, as on the paper score pads (seat 0 is "Seat 1" when no name is known).

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

LANGUAGES: tuple[str, ...] = ("en", "pl", "fr", "tr")
DEFAULT_LANGUAGE = "en"
SEED_SHOWN = 12  # hex digits of a seed or commitment shown in a sentence

EN: dict[str, str] = {
    # frames
    "actor.player": "{name} {predicate}",
    "actor.bot": "{name} (bot) {predicate}",
    "actor.timeout": "{name} ran out of time: {predicate}",
    "seat": "Seat {number}",
    "and": "and",
    "bang": "!",
    "unknown": "{type}",
    # counted nouns: one / few / many (Polish needs all three; the others use one and many)
    "n.flower.one": "{n} flower",
    "n.flower.few": "{n} flowers",
    "n.flower.many": "{n} flowers",
    "n.point.one": "{n} point",
    "n.point.few": "{n} points",
    "n.point.many": "{n} points",
    "n.card.one": "{n} card",
    "n.card.few": "{n} cards",
    "n.card.many": "{n} cards",
    "n.bullhead.one": "{n} bullhead",
    "n.bullhead.few": "{n} bullheads",
    "n.bullhead.many": "{n} bullheads",
    "n.trick.one": "{n} trick",
    "n.trick.few": "{n} tricks",
    "n.trick.many": "{n} tricks",
    # games
    "game.skull": "Skull",
    "game.six-nimmt": "6 nimmt!",
    "game.skull-king": "Skull King",
    # the table
    "table.table_created": "A {game} table for {players} players is open",
    "table.table_created.practice": "A practice {game} table for {players} players is open",
    "table.player_joined": "{name} takes seat {number}",
    "table.game_started": "Every seat is taken: the game begins",
    "table.seed_revealed": "The seed of round {round} is revealed: {seed}",
    "table.seed_chain_committed": "A new seed chain is committed from round {first_round} on: {commitment}",
    "table.game_finished.one": "Game over: {winners} wins; scores: {scores}",
    "table.game_finished.many": "Game over: {winners} win; scores: {scores}",
    "table.game_finished.none": "Game over; scores: {scores}",
    "table.seat_left": "{name} leaves the table",
    "table.bot_took_over": "A bot takes over from {name} ({reason})",
    "table.bot_took_over.left": "the player left",
    "table.bot_took_over.timeouts": "too many timeouts",
    "table.bot_took_over.host": "the host's decision",
    "table.seat_reclaimed": "{name} takes the seat back from the bot",
    "table.bot_seated": "Bot {name} takes seat {number}",
    "table.seat_claimed": "{name} plays as the registered player {account}",
    "table.turn_timed_out": "{name} ran out of time",
    "table.table_expired": "The table has expired",
    "table.table_timers_set": "Turns last {seconds} s; an unfilled table expires after {minutes} min",
    "table.table_timers_set.off": "No turn timer; an unfilled table expires after {minutes} min",
    # Skull
    "skull.disc.flower": "a flower",
    "skull.disc.skull": "a skull",
    "skull.disc.last_chance": "the Last chance disc",
    "skull.round_started": "Round {round} begins; {name} plays first ({reason})",
    "skull.first.table": "as agreed at the table",
    "skull.first.draw": "drawn by lot",
    "skull.first.challenger": "the last challenger",
    "skull.first.skull_owner": "owner of the skull",
    "skull.first.named": "named by the eliminated player",
    "skull.first.left_neighbour": "next to the eliminated challenger",
    "skull.disc_placed.hidden": "places a disc",
    "skull.disc_placed": "places {disc}",
    "skull.bid_made": "bids {count}",
    "skull.player_passed": "passes",
    "skull.challenge_started": "The auction is over: {name} must turn {flowers}",
    "skull.disc_flipped": "{name}'s disc is flipped: {disc}",
    "skull.disc_flipped.automatic": "{name}'s own disc is flipped: {disc}",
    "skull.challenge_succeeded": "wins the challenge and now has {points}",
    "skull.challenge_failed": "hits {owner}'s skull: the challenge fails",
    "skull.challenge_failed.own": "hits their own skull: the challenge fails",
    "skull.discs_shuffled": "{name} shuffles their discs face down ({count}); {picker} draws one blindly",
    "skull.disc_lost.hidden": "loses a disc ({how})",
    "skull.disc_lost": "loses {disc} ({how})",
    "skull.lost.drawn": "drawn blindly",
    "skull.lost.chosen": "own choice",
    "skull.lost.last_chance": "the last chance is gone",
    "skull.player_eliminated": "is out of the game",
    "skull.round_ended": (
        "Round {round} is over: {challenger} {outcome} with a bid of {bid}; points: {points}"
    ),
    "skull.outcome.success": "succeeds",
    "skull.outcome.failure": "fails",
    "skull.last_chance_returned": "gives back the Last chance disc",
    "skull.last_chance_given": "gets the Last chance disc for the next round",
    "skull.first_player_choice_requested": "must name the first player of the next round",
    # 6 nimmt!
    "six-nimmt.cards_dealt": "Round {round}: {cards} each; the rows start with {rows}",
    "six-nimmt.draft_opened": "Round {round}: {cards} lie face up for the draft; {name} picks first",
    "six-nimmt.card_drafted": "drafts {card}",
    "six-nimmt.draft_completed": "The draft is over; the rows start with {rows}",
    "six-nimmt.card_selected.hidden": "chooses a card",
    "six-nimmt.card_selected": "chooses {card}",
    "six-nimmt.cards_revealed": "Turn {turn}: the cards are revealed: {cards}",
    "six-nimmt.card_placed": "puts {card} at the end of row {row}",
    "six-nimmt.row_choice_awaited": "{card} is lower than every row: {name} must choose a row to take",
    "six-nimmt.row_taken.chosen": "takes row {row}: {bullheads}; {card} starts it",
    "six-nimmt.row_taken": "takes row {row} with {card}, its sixth card: {bullheads}",
    "six-nimmt.round_scored": "Round {round} is scored: {scores}",
    "six-nimmt.round_scored.final": "Round {round} is scored: {scores}; the game is over",
    # Skull King
    "skull-king.suit.yellow": "yellow",
    "skull-king.suit.red": "red",
    "skull-king.suit.blue": "blue",
    "skull-king.suit.black": "black",
    "skull-king.card.number": "{suit} {rank}",
    "skull-king.card.escape": "an Escape",
    "skull-king.card.pirate": "a Pirate",
    "skull-king.card.mermaid": "a Mermaid",
    "skull-king.card.scary-mary": "Scary Mary",
    "skull-king.card.skull-king": "the Skull King",
    "skull-king.as.pirate": "a Pirate",
    "skull-king.as.escape": "an Escape",
    "skull-king.first_dealer_chosen": "{name} is drawn to deal first",
    "skull-king.cards_dealt": "Round {round} begins; {dealer} deals {cards} each; {leader} leads",
    "skull-king.bid_placed.hidden": "places a bid",
    "skull-king.bid_placed": "bids {tricks}",
    "skull-king.bids_revealed": "The bids are revealed: {bids}",
    "skull-king.card_played": "plays {card}",
    "skull-king.card_played.as": "plays {card} as {declared}",
    "skull-king.trick_won": "wins trick {trick} with {card}",
    "skull-king.trick_won.bonus": "wins trick {trick} with {card} (bonus +{bonus})",
    "skull-king.round_scored": "Round {round} is scored: {scores}",
}

PL: dict[str, str] = {
    "actor.player": "{name} {predicate}",
    "actor.bot": "{name} (bot) {predicate}",
    "actor.timeout": "{name}: koniec czasu, {predicate}",
    "seat": "Miejsce {number}",
    "and": "i",
    "bang": "!",
    "unknown": "{type}",
    "n.flower.one": "{n} kwiat",
    "n.flower.few": "{n} kwiaty",
    "n.flower.many": "{n} kwiatów",
    "n.point.one": "{n} punkt",
    "n.point.few": "{n} punkty",
    "n.point.many": "{n} punktów",
    "n.card.one": "{n} kartę",
    "n.card.few": "{n} karty",
    "n.card.many": "{n} kart",
    "n.bullhead.one": "{n} byk",
    "n.bullhead.few": "{n} byki",
    "n.bullhead.many": "{n} byków",
    "n.trick.one": "{n} lewę",
    "n.trick.few": "{n} lewy",
    "n.trick.many": "{n} lew",
    "game.skull": "Skull",
    "game.six-nimmt": "6. Bierze",
    "game.skull-king": "Skull King",
    "table.table_created": "Otwarto stół {game} dla {players} graczy",
    "table.table_created.practice": "Otwarto stół treningowy {game} dla {players} graczy",
    "table.player_joined": "{name} zajmuje miejsce {number}",
    "table.game_started": "Wszystkie miejsca zajęte: gra się zaczyna",
    "table.seed_revealed": "Ujawniono ziarno losowania rundy {round}: {seed}",
    "table.seed_chain_committed": "Nowy łańcuch ziaren od rundy {first_round}: {commitment}",
    "table.game_finished.one": "Koniec gry. Wygrywa: {winners}; wyniki: {scores}",
    "table.game_finished.many": "Koniec gry. Wygrywają: {winners}; wyniki: {scores}",
    "table.game_finished.none": "Koniec gry; wyniki: {scores}",
    "table.seat_left": "{name} opuszcza stół",
    "table.bot_took_over": "{name}: miejsce przejmuje bot ({reason})",
    "table.bot_took_over.left": "gracz odszedł",
    "table.bot_took_over.timeouts": "zbyt wiele przekroczeń czasu",
    "table.bot_took_over.host": "decyzja gospodarza",
    "table.seat_reclaimed": "{name} odbiera miejsce botowi",
    "table.bot_seated": "Bot {name} zajmuje miejsce {number}",
    "table.seat_claimed": "{name} gra jako zarejestrowany gracz {account}",
    "table.turn_timed_out": "{name}: koniec czasu",
    "table.table_expired": "Stół wygasł",
    "table.table_timers_set": "Tura trwa {seconds} s; niezapełniony stół wygasa po {minutes} min",
    "table.table_timers_set.off": "Bez limitu czasu tury; niezapełniony stół wygasa po {minutes} min",
    "skull.disc.flower": "kwiat",
    "skull.disc.skull": "czaszka",
    "skull.disc.last_chance": "„Ostatnia szansa”",
    "skull.round_started": "Runda {round} się zaczyna; zaczyna {name} ({reason})",
    "skull.first.table": "ustalenie przy stole",
    "skull.first.draw": "losowanie",
    "skull.first.challenger": "ostatnie wyzwanie",
    "skull.first.skull_owner": "właściciel czaszki",
    "skull.first.named": "wybór wyeliminowanego gracza",
    "skull.first.left_neighbour": "sąsiad wyeliminowanego gracza",
    "skull.disc_placed.hidden": "kładzie żeton",
    "skull.disc_placed": "kładzie żeton: {disc}",
    "skull.bid_made": "licytuje {count}",
    "skull.player_passed": "pasuje",
    "skull.challenge_started": "Licytacja zakończona: {name} musi odkryć {flowers}",
    "skull.disc_flipped": "{name}: odkryty żeton – {disc}",
    "skull.disc_flipped.automatic": "{name}: odkryty własny żeton – {disc}",
    "skull.challenge_succeeded": "wygrywa wyzwanie i ma teraz {points}",
    "skull.challenge_failed": "trafia na czaszkę ({owner}): wyzwanie nieudane",
    "skull.challenge_failed.own": "trafia na własną czaszkę: wyzwanie nieudane",
    "skull.discs_shuffled": "{name} tasuje swoje żetony ({count}); {picker} losuje jeden z nich",
    "skull.disc_lost.hidden": "traci żeton ({how})",
    "skull.disc_lost": "traci żeton: {disc} ({how})",
    "skull.lost.drawn": "losowanie",
    "skull.lost.chosen": "własny wybór",
    "skull.lost.last_chance": "koniec ostatniej szansy",
    "skull.player_eliminated": "odpada z gry",
    "skull.round_ended": (
        "Koniec rundy {round}: {challenger}, stawka {bid}, wyzwanie {outcome}; punkty: {points}"
    ),
    "skull.outcome.success": "udane",
    "skull.outcome.failure": "nieudane",
    "skull.last_chance_returned": "oddaje żeton „Ostatnia szansa”",
    "skull.last_chance_given": "dostaje żeton „Ostatnia szansa” na następną rundę",
    "skull.first_player_choice_requested": "wskazuje gracza, który zacznie następną rundę",
    "six-nimmt.cards_dealt": "Runda {round}: każdy dostaje {cards}; rzędy zaczynają: {rows}",
    "six-nimmt.draft_opened": "Runda {round}: karty do wyboru leżą odkryte ({count}); wybór zaczyna {name}",
    "six-nimmt.card_drafted": "bierze kartę {card}",
    "six-nimmt.draft_completed": "Wybór kart zakończony; rzędy zaczynają: {rows}",
    "six-nimmt.card_selected.hidden": "wybiera kartę",
    "six-nimmt.card_selected": "wybiera kartę {card}",
    "six-nimmt.cards_revealed": "Tura {turn}: karty odkryte – {cards}",
    "six-nimmt.card_placed": "dokłada kartę {card} do rzędu {row}",
    "six-nimmt.row_choice_awaited": (
        "Karta {card} nie pasuje do żadnego rzędu: {name} wybiera rząd do zebrania"
    ),
    "six-nimmt.row_taken.chosen": "zbiera rząd {row}: {bullheads}; karta {card} zaczyna go od nowa",
    "six-nimmt.row_taken": "zbiera rząd {row}, bo karta {card} jest w nim szósta: {bullheads}",
    "six-nimmt.round_scored": "Runda {round} podliczona: {scores}",
    "six-nimmt.round_scored.final": "Runda {round} podliczona: {scores}; koniec gry",
    "skull-king.suit.yellow": "żółta",
    "skull-king.suit.red": "czerwona",
    "skull-king.suit.blue": "niebieska",
    "skull-king.suit.black": "czarna",
    "skull-king.card.number": "{suit} {rank}",
    "skull-king.card.escape": "Ucieczka",
    "skull-king.card.pirate": "Pirat",
    "skull-king.card.mermaid": "Syrena",
    "skull-king.card.scary-mary": "Scary Mary",
    "skull-king.card.skull-king": "Skull King",
    "skull-king.as.pirate": "Pirat",
    "skull-king.as.escape": "Ucieczka",
    "skull-king.first_dealer_chosen": "Losowanie: pierwsze rozdanie – {name}",
    "skull-king.cards_dealt": (
        "Runda {round} się zaczyna; rozdaje {dealer} (każdy dostaje {cards}); zaczyna {leader}"
    ),
    "skull-king.bid_placed.hidden": "składa deklarację",
    "skull-king.bid_placed": "deklaruje {tricks}",
    "skull-king.bids_revealed": "Deklaracje odkryte: {bids}",
    "skull-king.card_played": "zagrywa: {card}",
    "skull-king.card_played.as": "zagrywa: {card} (jako {declared})",
    "skull-king.trick_won": "bierze lewę {trick} ({card})",
    "skull-king.trick_won.bonus": "bierze lewę {trick} ({card}; premia +{bonus})",
    "skull-king.round_scored": "Runda {round} podliczona: {scores}",
}

FR: dict[str, str] = {
    "actor.player": "{name} {predicate}",
    "actor.bot": "{name} (bot) {predicate}",
    "actor.timeout": "Temps écoulé pour {name} : {predicate}",
    "seat": "Place {number}",
    "and": "et",
    "bang": " !",
    "unknown": "{type}",
    "n.flower.one": "{n} fleur",
    "n.flower.few": "{n} fleurs",
    "n.flower.many": "{n} fleurs",
    "n.point.one": "{n} point",
    "n.point.few": "{n} points",
    "n.point.many": "{n} points",
    "n.card.one": "{n} carte",
    "n.card.few": "{n} cartes",
    "n.card.many": "{n} cartes",
    "n.bullhead.one": "{n} tête de bœuf",
    "n.bullhead.few": "{n} têtes de bœuf",
    "n.bullhead.many": "{n} têtes de bœuf",
    "n.trick.one": "{n} pli",
    "n.trick.few": "{n} plis",
    "n.trick.many": "{n} plis",
    "game.skull": "Skull",
    "game.six-nimmt": "6 qui prend !",
    "game.skull-king": "Skull King",
    "table.table_created": "Une table de {game} pour {players} joueurs est ouverte",
    "table.table_created.practice": "Une table d'entraînement de {game} pour {players} joueurs est ouverte",
    "table.player_joined": "{name} prend la place {number}",
    "table.game_started": "Toutes les places sont prises : la partie commence",
    "table.seed_revealed": "La graine de la manche {round} est révélée : {seed}",
    "table.seed_chain_committed": (
        "Nouvelle chaîne de graines engagée à partir de la manche {first_round} : {commitment}"
    ),
    "table.game_finished.one": "Fin de la partie : {winners} gagne ; scores : {scores}",
    "table.game_finished.many": "Fin de la partie : {winners} gagnent ; scores : {scores}",
    "table.game_finished.none": "Fin de la partie ; scores : {scores}",
    "table.seat_left": "{name} quitte la table",
    "table.bot_took_over": "{name} : un bot prend le relais ({reason})",
    "table.bot_took_over.left": "départ du joueur",
    "table.bot_took_over.timeouts": "trop de temps dépassés",
    "table.bot_took_over.host": "décision de l'hôte",
    "table.seat_reclaimed": "{name} reprend sa place au bot",
    "table.bot_seated": "Le bot {name} prend la place {number}",
    "table.seat_claimed": "{name} joue en tant que joueur inscrit {account}",
    "table.turn_timed_out": "Temps écoulé pour {name}",
    "table.table_expired": "La table a expiré",
    "table.table_timers_set": "Tour de {seconds} s ; une table incomplète expire après {minutes} min",
    "table.table_timers_set.off": "Tours sans limite ; une table incomplète expire après {minutes} min",
    "skull.disc.flower": "une fleur",
    "skull.disc.skull": "un crâne",
    "skull.disc.last_chance": "le disque « Dernière chance »",
    "skull.round_started": "La manche {round} commence ; {name} joue en premier ({reason})",
    "skull.first.table": "choix de la table",
    "skull.first.draw": "tirage au sort",
    "skull.first.challenger": "dernier challenger",
    "skull.first.skull_owner": "propriétaire du crâne",
    "skull.first.named": "désignation par le joueur éliminé",
    "skull.first.left_neighbour": "voisin du challenger éliminé",
    "skull.disc_placed.hidden": "pose un disque",
    "skull.disc_placed": "pose {disc}",
    "skull.bid_made": "annonce {count}",
    "skull.player_passed": "passe",
    "skull.challenge_started": "Fin des enchères : {name} doit retourner {flowers}",
    "skull.disc_flipped": "Disque retourné chez {name} : {disc}",
    "skull.disc_flipped.automatic": "{name} retourne son propre disque : {disc}",
    "skull.challenge_succeeded": "réussit son défi et a maintenant {points}",
    "skull.challenge_failed": "tombe sur le crâne posé par {owner} : défi raté",
    "skull.challenge_failed.own": "tombe sur son propre crâne : défi raté",
    "skull.discs_shuffled": (
        "{name} mélange ses disques face cachée ({count}) ; {picker} en tire un au hasard"
    ),
    "skull.disc_lost.hidden": "perd un disque ({how})",
    "skull.disc_lost": "perd {disc} ({how})",
    "skull.lost.drawn": "tirage à l'aveugle",
    "skull.lost.chosen": "à son choix",
    "skull.lost.last_chance": "fin de la dernière chance",
    "skull.player_eliminated": "est hors jeu",
    "skull.round_ended": (
        "Fin de la manche {round} : défi {outcome} pour {challenger} ({bid}) ; points : {points}"
    ),
    "skull.outcome.success": "réussi",
    "skull.outcome.failure": "raté",
    "skull.last_chance_returned": "rend le disque « Dernière chance »",
    "skull.last_chance_given": "reçoit le disque « Dernière chance » pour la prochaine manche",
    "skull.first_player_choice_requested": "doit désigner le premier joueur de la prochaine manche",
    "six-nimmt.cards_dealt": "Manche {round} : {cards} chacun ; les rangées commencent par {rows}",
    "six-nimmt.draft_opened": "Manche {round} : {cards} face visible à choisir ; {name} choisit en premier",
    "six-nimmt.card_drafted": "prend le {card}",
    "six-nimmt.draft_completed": "Le choix est terminé ; les rangées commencent par {rows}",
    "six-nimmt.card_selected.hidden": "choisit une carte",
    "six-nimmt.card_selected": "choisit le {card}",
    "six-nimmt.cards_revealed": "Tour {turn} : cartes révélées : {cards}",
    "six-nimmt.card_placed": "pose le {card} au bout de la rangée {row}",
    "six-nimmt.row_choice_awaited": (
        "Le {card} est plus petit que toutes les rangées : {name} doit en ramasser une"
    ),
    "six-nimmt.row_taken.chosen": "ramasse la rangée {row} : {bullheads} ; le {card} la recommence",
    "six-nimmt.row_taken": "ramasse la rangée {row} avec le {card}, sixième carte : {bullheads}",
    "six-nimmt.round_scored": "Manche {round} comptée : {scores}",
    "six-nimmt.round_scored.final": "Manche {round} comptée : {scores} ; la partie est finie",
    "skull-king.suit.yellow": "jaune",
    "skull-king.suit.red": "rouge",
    "skull-king.suit.blue": "bleu",
    "skull-king.suit.black": "noir",
    "skull-king.card.number": "le {rank} {suit}",
    "skull-king.card.escape": "une Escape",
    "skull-king.card.pirate": "un Pirate",
    "skull-king.card.mermaid": "une Sirène",
    "skull-king.card.scary-mary": "Scary Mary",
    "skull-king.card.skull-king": "le Skull King",
    "skull-king.as.pirate": "Pirate",
    "skull-king.as.escape": "Escape",
    "skull-king.first_dealer_chosen": "Tirage au sort : {name} donne en premier",
    "skull-king.cards_dealt": (
        "La manche {round} commence ; {dealer} donne {cards} à chacun ; {leader} entame"
    ),
    "skull-king.bid_placed.hidden": "fait sa prédiction",
    "skull-king.bid_placed": "prédit {tricks}",
    "skull-king.bids_revealed": "Prédictions révélées : {bids}",
    "skull-king.card_played": "joue {card}",
    "skull-king.card_played.as": "joue {card} en {declared}",
    "skull-king.trick_won": "remporte le pli {trick} avec {card}",
    "skull-king.trick_won.bonus": "remporte le pli {trick} avec {card} (bonus +{bonus})",
    "skull-king.round_scored": "Manche {round} comptée : {scores}",
}

TR: dict[str, str] = {
    "actor.player": "{name} {predicate}",
    "actor.bot": "{name} (bot) {predicate}",
    "actor.timeout": "{name}: süre doldu, {predicate}",
    "seat": "Koltuk {number}",
    "and": "ve",
    "bang": "!",
    "unknown": "{type}",
    "n.flower.one": "{n} gül",
    "n.flower.few": "{n} gül",
    "n.flower.many": "{n} gül",
    "n.point.one": "{n} puan",
    "n.point.few": "{n} puan",
    "n.point.many": "{n} puan",
    "n.card.one": "{n} kart",
    "n.card.few": "{n} kart",
    "n.card.many": "{n} kart",
    "n.bullhead.one": "{n} ceza puanı",
    "n.bullhead.few": "{n} ceza puanı",
    "n.bullhead.many": "{n} ceza puanı",
    "n.trick.one": "{n} el",
    "n.trick.few": "{n} el",
    "n.trick.many": "{n} el",
    "game.skull": "Skull",
    "game.six-nimmt": "6 nimmt!",
    "game.skull-king": "Skull King",
    "table.table_created": "{players} kişilik bir {game} masası açıldı",
    "table.table_created.practice": "{players} kişilik bir {game} alıştırma masası açıldı",
    "table.player_joined": "{name} {number}. koltuğa oturdu",
    "table.game_started": "Tüm koltuklar doldu: oyun başlıyor",
    "table.seed_revealed": "{round}. turun tohumu açıklandı: {seed}",
    "table.seed_chain_committed": (
        "{first_round}. turdan itibaren yeni tohum zinciri taahhüt edildi: {commitment}"
    ),
    "table.game_finished.one": "Oyun bitti. Kazanan: {winners}; skorlar: {scores}",
    "table.game_finished.many": "Oyun bitti. Kazananlar: {winners}; skorlar: {scores}",
    "table.game_finished.none": "Oyun bitti; skorlar: {scores}",
    "table.seat_left": "{name} masadan ayrıldı",
    "table.bot_took_over": "{name}: koltuğu bir bot devraldı ({reason})",
    "table.bot_took_over.left": "oyuncu ayrıldı",
    "table.bot_took_over.timeouts": "çok fazla süre aşımı",
    "table.bot_took_over.host": "masa sahibinin kararı",
    "table.seat_reclaimed": "{name} yerini bottan geri alıyor",
    "table.bot_seated": "Bot {name} {number}. koltuğa oturdu",
    "table.seat_claimed": "{name}, kayıtlı oyuncu {account} olarak oynuyor",
    "table.turn_timed_out": "{name}: süre doldu",
    "table.table_expired": "Masanın süresi doldu",
    "table.table_timers_set": "Her tur {seconds} sn sürer; dolmayan masa {minutes} dk sonra kapanır",
    "table.table_timers_set.off": "Tur süresi yok; dolmayan masa {minutes} dk sonra kapanır",
    "skull.disc.flower": "gül",
    "skull.disc.skull": "kuru kafa",
    "skull.disc.last_chance": "Son Şans diski",
    "skull.round_started": "{round}. tur başladı; ilk oyuncu {name} ({reason})",
    "skull.first.table": "masada belirlendi",
    "skull.first.draw": "kura ile",
    "skull.first.challenger": "son meydan okuyan",
    "skull.first.skull_owner": "kuru kafanın sahibi",
    "skull.first.named": "elenen oyuncunun seçimi",
    "skull.first.left_neighbour": "elenen oyuncunun solundaki",
    "skull.disc_placed.hidden": "bir disk koydu",
    "skull.disc_placed": "disk koydu: {disc}",
    "skull.bid_made": "{count} teklif etti",
    "skull.player_passed": "pas geçti",
    "skull.challenge_started": "Teklifler bitti: {name} {flowers} açmalı",
    "skull.disc_flipped": "{name}: disk açıldı – {disc}",
    "skull.disc_flipped.automatic": "{name}: kendi diski açıldı – {disc}",
    "skull.challenge_succeeded": "meydan okumayı kazandı; toplam puan: {count}",
    "skull.challenge_failed": "bir kuru kafa açtı ({owner}): meydan okuma başarısız",
    "skull.challenge_failed.own": "kendi kuru kafasını açtı: meydan okuma başarısız",
    "skull.discs_shuffled": (
        "{name} disklerini kapalı karıştırdı ({count}); {picker} körlemesine birini seçecek"
    ),
    "skull.disc_lost.hidden": "bir disk kaybetti ({how})",
    "skull.disc_lost": "disk kaybetti: {disc} ({how})",
    "skull.lost.drawn": "rastgele çekildi",
    "skull.lost.chosen": "kendi seçimi",
    "skull.lost.last_chance": "son şans bitti",
    "skull.player_eliminated": "oyundan elendi",
    "skull.round_ended": (
        "{round}. tur bitti: {challenger}, teklif {bid}, meydan okuma {outcome}; puanlar: {points}"
    ),
    "skull.outcome.success": "başarılı",
    "skull.outcome.failure": "başarısız",
    "skull.last_chance_returned": "Son Şans diskini geri verdi",
    "skull.last_chance_given": "bir sonraki tur için Son Şans diskini aldı",
    "skull.first_player_choice_requested": "bir sonraki turun ilk oyuncusunu seçmeli",
    "six-nimmt.cards_dealt": "{round}. tur: herkese {cards} dağıtıldı; sıralar: {rows}",
    "six-nimmt.draft_opened": "{round}. tur: seçim için {cards} açık duruyor; ilk seçen {name}",
    "six-nimmt.card_drafted": "{card} kartını aldı",
    "six-nimmt.draft_completed": "Seçim bitti; sıralar: {rows}",
    "six-nimmt.card_selected.hidden": "bir kart seçti",
    "six-nimmt.card_selected": "{card} kartını seçti",
    "six-nimmt.cards_revealed": "{turn}. hamle: kartlar açıldı – {cards}",
    "six-nimmt.card_placed": "{card} kartını {row}. sıranın sonuna koydu",
    "six-nimmt.row_choice_awaited": "{card} hiçbir sıraya uymuyor: {name} alacağı sırayı seçmeli",
    "six-nimmt.row_taken.chosen": "{row}. sırayı aldı: {bullheads}; sıra {card} ile yeniden başlıyor",
    "six-nimmt.row_taken": "{row}. sırayı aldı, çünkü {card} altıncı kart oldu: {bullheads}",
    "six-nimmt.round_scored": "{round}. tur puanlandı: {scores}",
    "six-nimmt.round_scored.final": "{round}. tur puanlandı: {scores}; oyun bitti",
    "skull-king.suit.yellow": "sarı",
    "skull-king.suit.red": "kırmızı",
    "skull-king.suit.blue": "mavi",
    "skull-king.suit.black": "siyah",
    "skull-king.card.number": "{suit} {rank}",
    "skull-king.card.escape": "Kaçış",
    "skull-king.card.pirate": "Korsan",
    "skull-king.card.mermaid": "Deniz Kızı",
    "skull-king.card.scary-mary": "Scary Mary",
    "skull-king.card.skull-king": "Skull King",
    "skull-king.as.pirate": "Korsan",
    "skull-king.as.escape": "Kaçış",
    "skull-king.first_dealer_chosen": "Kura: ilk dağıtan {name}",
    "skull-king.cards_dealt": "{round}. tur başladı; {dealer} herkese {cards} dağıttı; ilk oynayan {leader}",
    "skull-king.bid_placed.hidden": "tahminini yaptı",
    "skull-king.bid_placed": "{tricks} tahmin etti",
    "skull-king.bids_revealed": "Tahminler açıklandı: {bids}",
    "skull-king.card_played": "{card} oynadı",
    "skull-king.card_played.as": "{card} oynadı ({declared} olarak)",
    "skull-king.trick_won": "{trick}. eli {card} ile aldı",
    "skull-king.trick_won.bonus": "{trick}. eli {card} ile aldı (bonus +{bonus})",
    "skull-king.round_scored": "{round}. tur puanlandı: {scores}",
}

CATALOGS: dict[str, dict[str, str]] = {"en": EN, "pl": PL, "fr": FR, "tr": TR}


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
        self.lang = lang if lang in CATALOGS else DEFAULT_LANGUAGE
        self.catalog = CATALOGS[self.lang]
        self.names = names
        self.by = by

    def __call__(self, key: str, **values: Any) -> str:
        return self.catalog[key].format(**values)

    def name(self, seat: Any) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        number = seat + 1 if isinstance(seat, int) else seat
        return self("seat", number=number)

    def count(self, noun: str, n: int) -> str:
        return self(f"n.{noun}.{_plural_form(self.lang, n)}", n=n)

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


def _plural_form(lang: str, n: int) -> str:
    """CLDR-style cardinal categories, reduced to the three keys the catalogs use."""
    if lang == "pl":
        if n == 1:
            return "one"
        if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            return "few"
        return "many"
    if lang == "fr":
        return "one" if n in (0, 1) else "many"
    return "one" if n == 1 else "many"


def _short(hex_text: Any) -> str:
    text = str(hex_text)
    return text if len(text) <= SEED_SHOWN else text[:SEED_SHOWN] + "…"


def _signed(value: Any) -> str:
    return f"{value:+d}" if isinstance(value, int) else str(value)


# -- the table ----------------------------------------------------------------------------------


def _table_created(say: _Say, e: Mapping[str, Any]) -> str:
    key = "table.table_created.practice" if e.get("practice") else "table.table_created"
    game = e.get("game")
    title = say(f"game.{game}") if f"game.{game}" in say.catalog else str(game)
    return say(key, game=title, players=e.get("players"))


def _player_joined(say: _Say, e: Mapping[str, Any]) -> str:
    seat = e["seat"]
    return say("table.player_joined", name=e.get("name") or say.name(seat), number=seat + 1)


def _game_finished(say: _Say, e: Mapping[str, Any]) -> str:
    winners = list(e.get("winners") or ())
    key = {0: "table.game_finished.none", 1: "table.game_finished.one"}.get(
        len(winners), "table.game_finished.many"
    )
    names = say.listing([say.name(seat) for seat in winners])
    return say(key, winners=names, scores=say.by_seat(e.get("scores") or ()))


def _bot_took_over(say: _Say, e: Mapping[str, Any]) -> str:
    reason = str(e.get("reason"))
    key = f"table.bot_took_over.{reason}"
    why = say(key) if key in say.catalog else reason
    return say("table.bot_took_over", name=say.name(e["seat"]), reason=why)


def _bot_seated(say: _Say, e: Mapping[str, Any]) -> str:
    seat = e["seat"]
    return say("table.bot_seated", name=e.get("name") or say.name(seat), number=seat + 1)


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
    "bot_took_over": _bot_took_over,
    "seat_reclaimed": lambda say, e: say("table.seat_reclaimed", name=say.name(e["seat"])),
    "bot_seated": _bot_seated,
    "seat_claimed": lambda say, e: say(
        "table.seat_claimed", name=say.name(e["seat"]), account=e.get("display_name") or e["account_id"]
    ),
    "turn_timed_out": lambda say, e: say("table.turn_timed_out", name=say.name(e["seat"])),
    "table_expired": lambda say, e: say("table.table_expired"),
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
        say("skull.challenge_succeeded", points=say.count("point", e["points"]), count=e["points"]),
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
    count = len(e["cards"])
    return say(
        "six-nimmt.draft_opened",
        round=e["round"],
        cards=say.count("card", count),
        count=count,
        name=say.name(e["first_drafter"]),
    )


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
