"""Taking a seat back from the bot that took it over after timeouts, in the table Decider, the
verifier and the rating rule; and the bot pace among the table's options, recorded so that streams
recorded before it re-run to their exact bytes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.kernel import Conflict, Rejected
from domain.table import SeatReclaimed, TableTimersSet, table_timers
from projections.ratings import forfeits, unrated_reason
from projections.views import seat_view
from services.cli.verify import main as verify_main
from services.history.export import build_export
from services.history.folding import advance
from services.history.records import CommandRecord, decode_stored, encode_event
from services.history.verify import parse_entries, verify_export
from tests.support.online import TIMERS, bot_acts, leave, online_game, play_online, reclaim, time_out
from tests.support.recorded import RecordedGame

ONLINE_GOLDEN = Path(__file__).parent.parent / "support" / "golden" / "online"


def _taken_over(seed: int = 3, players: int = 3) -> tuple[RecordedGame, int]:
    """A Skull King table of people whose first awaited seat a bot took over after one timeout."""
    g = online_game("skull-king", players, seed=seed, timers={**TIMERS, "takeover_after": 1})
    seat = g.table.to_act(g.state)[0]
    time_out(g, seat, random.Random(seed))
    assert g.state.takeovers == {seat: "timeouts"}
    return g, seat


def _tags(g: RecordedGame) -> set[str]:
    return {msgspec.json.decode(bytes(decode_stored(e.data).event))["type"] for e in g.entries}


def test_a_seat_taken_over_after_timeouts_is_taken_back_and_its_player_plays_it_again() -> None:
    g, seat = _taken_over()
    assert reclaim(g, seat) == [SeatReclaimed(seat=seat)]
    assert seat not in g.state.bots and seat not in g.state.takeovers
    assert g.state.streaks[seat] == 0
    _until_awaited(g, seat, random.Random(4))
    command = g.table.legal_commands(g.state, seat)[0]
    with pytest.raises(Rejected) as refused:  # no bot may act for it any more
        g.table.bot_decide(g.state, command, seat, g.seeds)
    assert refused.value.code == "not_a_bot"
    g.act(seat, command)  # its own command again, not refused as the bot's seat


def _until_awaited(g: RecordedGame, seat: int, rng: random.Random) -> None:
    """The other seats play (their bots, or their people) until ``seat`` is awaited."""
    while seat not in g.table.to_act(g.state):
        other = g.table.to_act(g.state)[0]
        if other in g.state.bots:
            bot_acts(g, other, rng)
        else:
            g.act(other, rng.choice(g.legal(other)))


def test_a_reclaimed_seat_gets_takeover_after_fresh_timeouts_before_a_bot_takes_it_again() -> None:
    g = online_game("six-nimmt", 3, seed=2, timers={**TIMERS, "takeover_after": 2})
    seat, rng = 0, random.Random(2)
    for _ in range(2):
        _until_awaited(g, seat, rng)
        time_out(g, seat, rng)
    assert g.state.takeovers == {seat: "timeouts"}
    reclaim(g, seat)
    assert g.state.streaks[seat] == 0
    _until_awaited(g, seat, rng)
    time_out(g, seat, rng)
    assert seat not in g.state.bots and g.state.streaks[seat] == 1


def test_only_a_seat_taken_over_after_timeouts_can_be_taken_back() -> None:
    g, seat = _taken_over()
    own = next(s for s in range(3) if s != seat)
    with pytest.raises(Conflict) as refused:
        g.table.reclaim(g.state, own)
    assert refused.value.code == "not_taken_over"
    leave(g, own)  # left: a bot plays it for good
    leave(g, seat)  # a seat a bot already played after timeouts, then left
    assert g.state.takeovers == {own: "left", seat: "left"}
    for left in (own, seat):
        with pytest.raises(Conflict) as refused:
            g.table.reclaim(g.state, left)
        assert refused.value.code == "cannot_reclaim"
    hosted = online_game("skull", 3, seed=1, humans=1)
    assert hosted.state.takeovers == {1: "host", 2: "host"}
    with pytest.raises(Conflict) as refused:
        hosted.table.reclaim(hosted.state, 1)
    assert refused.value.code == "cannot_reclaim"
    with pytest.raises(Rejected) as outside:
        hosted.table.reclaim(hosted.state, 7)
    assert outside.value.code == "not_seated"


def test_no_seat_is_taken_back_before_the_game_starts_or_after_it_ends() -> None:
    waiting = online_game("skull", 3, seed=1, humans=2)
    waiting_state = msgspec.structs.replace(waiting.state, status="waiting")
    with pytest.raises(Conflict) as refused:
        waiting.table.reclaim(waiting_state, 0)
    assert refused.value.code == "not_started"
    g, seat = _taken_over()
    play_online(g, random.Random(5), timeout_share=0.0, leave_share=0.0)
    assert g.state.status == "finished" and seat in g.state.bots
    with pytest.raises(Conflict) as refused:
        g.table.reclaim(g.state, seat)
    assert refused.value.code == "game_over"


def _verify_cli(doc: dict[str, Any], path: Path) -> int:
    """``tablestream verify FILE`` on the export ``doc``: 0 verified, 1 a check failed."""
    path.write_text(json.dumps(doc))
    return verify_main([str(path)])


def test_tablestream_verify_accepts_a_game_with_reclaimed_seats(tmp_path: Path) -> None:
    for seed in range(40):
        g = online_game("skull-king", 3, seed=seed, timers={**TIMERS, "takeover_after": 1})
        play_online(g, random.Random(seed), timeout_share=0.4, leave_share=0.0, reclaim_share=0.5)
        if "seat_reclaimed" in _tags(g):
            break
    assert "seat_reclaimed" in _tags(g)
    report = verify_export(build_export(g.entries))
    assert report.ok, report.render()
    assert _verify_cli(build_export(g.entries), tmp_path / "game.json") == 0


def test_tablestream_verify_refuses_a_forged_reclaim_of_a_seat_no_bot_took_over(tmp_path: Path) -> None:
    g = online_game("skull-king", 3, seed=8)
    own = g.table.to_act(g.state)[0]
    forged = [SeatReclaimed(seat=own)]  # a chained, well-formed record the rules never allowed
    g.record(CommandRecord(id="reclaim-forged", kind="reclaim", seat=own, body={}), forged)
    play_online(g, random.Random(8), timeout_share=0.0, leave_share=0.0)
    report = verify_export(build_export(g.entries))
    assert not report.ok
    assert any("not_taken_over" in failure for failure in report.failures()), report.render()
    assert _verify_cli(build_export(g.entries), tmp_path / "forged.json") == 1


def test_the_verifier_refuses_a_seat_reclaimed_event_that_no_reclaim_asked_for() -> None:
    g, seat = _taken_over(seed=9)
    rng = random.Random(9)
    _until_awaited(g, seat, rng)
    command = rng.choice(g.table.legal_commands(g.state, seat))
    events = g.table.bot_decide(g.state, command, seat, g.seeds)
    body = msgspec.to_builtins(command)
    forged = f"bot-{len(g.entries)}-{seat}"
    # the bot's move, chained and well formed, with the seat handed back slipped in after it
    g.record(
        CommandRecord(id=forged, kind="bot", seat=seat, body=body),
        [*events, SeatReclaimed(seat=seat)],
    )
    play_online(g, rng, timeout_share=0.0, leave_share=0.0)
    report = verify_export(build_export(g.entries))
    assert not report.ok
    assert any(forged in failure and "the stream holds" in failure for failure in report.failures())


def test_a_seat_taken_back_neither_unrates_the_game_nor_forfeits() -> None:
    """Issue 24: a bot's takeover no longer unrates a game (the host seating one does); the seat its
    player took back is ranked by its score (only a seat left, or still a bot's, forfeits)."""
    g, seat = _taken_over()
    reclaim(g, seat)
    play_online(g, random.Random(6), timeout_share=0.0, leave_share=0.0)
    assert g.state.status == "finished" and not g.state.bots
    assert unrated_reason(g.state, _tags(g)) == "anonymous_seats"  # guests here; no "bots"
    assert forfeits(g.state) == {}


def test_views_say_why_a_bot_plays_each_seat() -> None:
    g, seat = _taken_over(players=4)
    others = [s for s in range(4) if s != seat]
    leave(g, others[0])
    view = seat_view(g.state, len(g.entries), others[1])
    takeovers = {p["seat"]: p["takeover"] for p in view["players"]}
    assert takeovers == {seat: "timeouts", others[0]: "left", others[1]: None, others[2]: None}
    assert [p["bot"] for p in view["players"]] == [p["takeover"] is not None for p in view["players"]]
    hosted = online_game("skull", 3, seed=1, humans=1)
    hosted_view = seat_view(hosted.state, len(hosted.entries), None)
    assert [p["takeover"] for p in hosted_view["players"]] == [None, "host", "host"]
    reclaim(g, seat)
    again = seat_view(g.state, len(g.entries), seat)
    assert next(p for p in again["players"] if p["seat"] == seat)["takeover"] is None


# -- the bot pace among the table's options ---------------------------------------------------------


def test_the_bot_pace_defaults_to_the_servers_and_a_table_may_choose_its_own_within_bounds() -> None:
    assert table_timers({}, practice=False, bot_pace_ms=1000)["bot_pace_ms"] == 1000
    assert table_timers({"bot_pace_ms": 0}, practice=False, bot_pace_ms=1000)["bot_pace_ms"] == 0
    assert table_timers({"bot_pace_ms": 5000}, practice=True)["bot_pace_ms"] == 5000
    for bad in (-1, 5001, "fast", 1.5):
        with pytest.raises(Rejected) as refused:
            table_timers({"bot_pace_ms": bad}, practice=False)
        assert refused.value.code == "invalid_options"


def test_a_paced_table_records_its_pace_and_an_unpaced_one_records_the_bytes_of_before() -> None:
    paced = online_game("skull", 3, seed=1, timers={**TIMERS, "bot_pace_ms": 800})
    assert paced.state.timers is not None and paced.state.timers.bot_pace_ms == 800
    unpaced = online_game("skull", 3, seed=1, timers={**TIMERS, "bot_pace_ms": 0})
    assert unpaced.state.timers is not None and unpaced.state.timers.bot_pace_ms == 0
    before = b'{"type":"table_timers_set","turn_seconds":60,"expire_minutes":30,"takeover_after":3}'
    assert encode_event(TableTimersSet(turn_seconds=60, expire_minutes=30, takeover_after=3)) == before
    assert before in unpaced.entries[1].data
    assert b'"bot_pace_ms":800' in paced.entries[1].data
    for g in (paced, unpaced):
        play_online(g, random.Random(2), timeout_share=0.2, leave_share=0.0)
        report = verify_export(build_export(g.entries))
        assert report.ok, report.render()


@pytest.mark.parametrize("path", sorted(ONLINE_GOLDEN.glob("*.json")), ids=lambda p: p.stem)
def test_a_stream_recorded_before_bot_pacing_still_verifies_byte_for_byte_and_has_no_pace(path: Path) -> None:
    doc = json.loads(path.read_text())
    report = verify_export(doc)
    assert report.ok, report.render()
    entries = parse_entries(doc)
    folded = advance("golden", None, entries)
    assert folded.state.timers is not None and folded.state.timers.bot_pace_ms == 0
    assert b"bot_pace_ms" not in b"".join(e.data for e in entries)
    assert {"timeouts", "left"} <= set(folded.state.takeovers.values())
