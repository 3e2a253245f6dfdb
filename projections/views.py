"""Read models of one table: each seat's view, the spectator view, the scoreboard, the lobby entry.

Pure functions of the folded table state and its version: the same input gives the same bytes,
whether a worker materialises them into Redis or the API computes one on demand.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.games import table_for
from domain.table import Player, TableState, TakeoverReason
from projections.registry import views_for

_encoder = msgspec.json.Encoder(order="deterministic")


def seat_view(state: TableState, version: int, seat: int | None) -> dict[str, Any]:
    """What ``seat`` (``None``: a spectator) may see of the table at ``version``: the public part
    and the viewer's own part together."""
    return {**public_part(state, version), **own_part(state, seat)}


def public_part(state: TableState, version: int) -> dict[str, Any]:
    """The fields of a view that every viewer (each seat and a spectator) sees alike at ``version``:
    built once per version (``materialise``). Nothing in it depends on a viewer."""
    table = table_for(state.game)
    rules, game_views = table.rules, views_for(state.game)
    gs = state.game_state
    started = state.status != "waiting"
    players = []
    for player in state.seated:
        entry: dict[str, Any] = {
            "seat": player.seat,
            "name": player.name,
            **_account(player),
            "bot": player.seat in state.bots,
            "left": player.seat in state.left,
            "takeover": takeover(state, player.seat),
        }
        if player.seat in state.bots:
            entry["bot_level"] = state.bot_level(player.seat)
        if started:
            entry.update(game_views.player_public(gs, player.seat))
        players.append(entry)
    view: dict[str, Any] = {
        "game": state.game,
        "game_id": state.game_id,
        "version": version,
        "status": state.status,
        "phase": rules.phase(gs) if started else "waiting_for_players",
        "practice": state.practice,
        "seats": state.players,
        "options": msgspec.to_builtins(state.options),
        "bot_pace_ms": state.timers.bot_pace_ms if state.timers is not None else 0,
        "turn_based": state.timers is not None and state.timers.turn_based,
        "players": players,
        "to_act": sorted(table.to_act(state)),
        "scores": list(rules.scores(gs)) if started else [0] * state.players,
        "winners": list(state.winners),
        "hints_used": sorted(state.hinted),  # seats that asked for a hint (public; the hints are not)
        "fairness": {"commitments": list(state.commitments), "revealed_seeds": _seeds(state)},
    }
    if started:
        view.update(game_views.public(gs))
    return view


def own_part(state: TableState, seat: int | None) -> dict[str, Any]:
    """The fields of ``seat``'s view (``None``: a spectator) that depend on the viewer: its seat,
    its legal commands and the game's own private fields (a hand, a face-down card)."""
    table = table_for(state.game)
    part: dict[str, Any] = {"seat": seat, "legal": msgspec.to_builtins(table.legal_commands(state, seat))}
    if state.status != "waiting":
        part.update(views_for(state.game).own(state.game_state, seat))
    return part


def scoreboard(state: TableState, version: int) -> dict[str, Any]:
    started = state.status != "waiting"
    board: dict[str, Any] = {
        "game": state.game,
        "game_id": state.game_id,
        "version": version,
        "status": state.status,
        "players": [{"seat": p.seat, "name": p.name, **_account(p)} for p in state.seated],
        "winners": list(state.winners),
        "fairness": {"commitments": list(state.commitments), "revealed_seeds": _seeds(state)},
    }
    if started:
        board.update(views_for(state.game).scoreboard(state.game_state))
    else:
        board.update({"rounds": [], "totals": [0] * state.players})
    return board


def takeover(state: TableState, seat: int) -> TakeoverReason | None:
    """Why a bot plays ``seat``: ``"host"`` (the host filled it), ``"timeouts"`` (its player missed
    turns: they may take it back), ``"left"`` (its player left); ``None`` when its player plays it."""
    if seat not in state.bots:
        return None
    if seat in state.left:
        return "left"
    return state.takeovers.get(seat, "host")


def _account(player: Player) -> dict[str, Any]:
    """A claimed seat's public account (id and display name); nothing for an anonymous seat."""
    if player.account is None:
        return {}
    return {"account": {"id": player.account.id, "name": player.account.name}}


def _seeds(state: TableState) -> dict[str, str]:
    return {str(number): seed for number, seed in sorted(state.revealed.items())}


def lobby_entry(state: TableState, version: int) -> dict[str, Any]:
    """A table in the lobby; a turn-based one says `"turn_based": true` (others leave it out)."""
    return {
        "game_id": state.game_id,
        "game": state.game,
        "seats": state.players,
        "seats_taken": len([p for p in state.seated if p.seat not in state.left]),
        "status": state.status,
        "practice": state.practice,
        **({"turn_based": True} if state.timers is not None and state.timers.turn_based else {}),
        "version": version,
    }


PUBLIC_FIELD = "public"
"""The views hash's field of the public part; each viewer's own part is under ``view_field``."""
SCORES_FIELD = "scores"


def materialise(state: TableState, version: int) -> dict[str, bytes]:
    """Every read model of the table as encoded bytes, keyed by their field in the views hash: the
    public part of the views once (``PUBLIC_FIELD``), each seat's and the spectator's own part
    (``view_field``; a whole view is ``compose(public, own)``) and the scoreboard."""
    fields = {PUBLIC_FIELD: encode(public_part(state, version))}
    for seat in (*range(state.players), None):
        fields[view_field(seat)] = encode(own_part(state, seat))
    fields[SCORES_FIELD] = encode(scoreboard(state, version))
    return fields


def view_field(seat: int | None) -> str:
    return "spectator" if seat is None else f"seat:{seat}"


_raw_object = msgspec.json.Decoder(dict[str, msgspec.Raw])


def compose(public: bytes, own: bytes) -> bytes:
    """A viewer's whole view from the encoded public part and its own part: the same bytes as
    ``encode(seat_view(...))`` (keys in sorted order, each value's encoding kept as it is)."""
    merged = _raw_object.decode(public)
    merged.update(_raw_object.decode(own))
    return _encoder.encode(merged)


def encode(model: dict[str, Any]) -> bytes:
    return _encoder.encode(model)
