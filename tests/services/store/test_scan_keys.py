"""The SCAN of every game's stream (``indexes.scan_games``, for the sweeper's index rebuild and the
retention backfill) finds games only: an account's stream matches the same key pattern, and taken
for a game it was marked lagging and failed its projection over and over."""

from __future__ import annotations

from services.store.keys import account_events_key, game_id_of_events_key, game_keys


def test_an_accounts_stream_is_not_taken_for_a_game() -> None:
    assert game_id_of_events_key(account_events_key("0123456789abcdef")) is None
    assert game_id_of_events_key(account_events_key("0123456789abcdef").encode()) is None


def test_a_games_stream_still_names_its_game() -> None:
    assert game_id_of_events_key(game_keys("Ab_9-x").events) == "Ab_9-x"
