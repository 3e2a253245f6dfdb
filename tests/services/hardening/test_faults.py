"""Faults with real processes: ``tablestream serve`` (embedded Redis, AOF always, a worker) while
bots play all three games over HTTP. Redis is SIGKILLed, the worker SIGKILLed, Redis paused past
the client timeouts; afterwards every receipt is in its stream, every view converges, every game
verifies, and serve has restarted what it supervises."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import httpx
import pytest

from domain.games import specs
from services.history.verify import verify_export
from services.store.keys import game_keys
from tests.services.hardening.real_stack import Bot, Stack, served
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.timeout(240)]

FAST = {
    "create_rate": "1000/second",
    "join_rate": "1000/second",
    "command_rate": "1000/second",
    "max_waiting_tables_per_address": "100000",
    "max_waiting_tables_per_network": "100000",
    "max_waiting_tables_new_account": "100000",
}


def _head_and_checkpoint(stack: Stack, game_id: str) -> tuple[int, int]:
    keys = game_keys(game_id)
    with stack.redis() as client:
        top = client.xrevrange(keys.events, count=1)
        checkpoint = client.hget(keys.views, "checkpoint")
    head = int(top[0][0].decode().split("-")[1]) if top else 0
    return head, int(checkpoint or 0)


def _some_play(bots: list[Bot], minimum: int) -> bool:
    return all(len(bot.receipts) >= minimum for bot in bots)


def _await_play(bots: list[Bot], minimum: int, deadline_s: float, what: str, log: Path) -> None:
    """Wait for every bot to hold ``minimum`` receipts; on a timeout, say where each one stands and
    what serve logged, so that a failure on a loaded machine can be read from its report."""
    try:
        wait_until(lambda: _some_play(bots, minimum), deadline_s, what)
    except AssertionError as timeout:
        standing = [
            f"{bot.game} {bot.game_id}: {len(bot.receipts)} receipts, last statuses {bot.statuses[-5:]}"
            for bot in bots
        ]
        raise AssertionError("\n".join([str(timeout), *standing, log.read_text()[-3000:]])) from None


def test_redis_killed_worker_killed_and_redis_paused_lose_nothing_and_everything_recovers(
    tmp_path: Path,
) -> None:
    with served(tmp_path, **FAST) as stack:
        bots = [
            Bot(stack.base, game, players, seed)
            for seed, (game, players) in enumerate(
                [  # five tables of the registry's games, three seats then four
                    (spec.name, seats)
                    for seats in (3, 4)
                    for spec in specs()
                    if spec.min_players <= seats <= spec.max_players
                ][:5]
            )
        ]
        errors: list[BaseException] = []

        def play(bot: Bot) -> None:
            try:
                bot.play()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=play, args=(bot,), daemon=True) for bot in bots]
        for thread in threads:
            thread.start()

        # 1. Redis SIGKILLed mid-play: serve restarts it on its AOF.
        serve_log = tmp_path / "serve.log"
        _await_play(bots, 3, 60, "the bots to start playing", serve_log)
        first_redis = stack.redis_pid()
        assert first_redis is not None
        os.kill(first_redis, signal.SIGKILL)
        wait_until(lambda: stack.redis_pid() not in (None, first_redis), 30, "serve to restart Redis")

        # 2. The worker SIGKILLed: serve starts another.
        _await_play(bots, 6, 60, "play to go on after the Redis restart", serve_log)
        wait_until(lambda: stack.worker_pid() is not None, 30, "a worker (serve may be restarting it)")
        first_worker = stack.worker_pid()
        assert first_worker is not None
        os.kill(first_worker, signal.SIGKILL)
        wait_until(lambda: stack.worker_pid() not in (None, first_worker), 30, "serve to restart the worker")

        # 3. Redis paused past the clients' 1 s timeouts, until the API reports it unreachable.
        paused = stack.redis_pid()
        assert paused is not None
        os.kill(paused, signal.SIGSTOP)
        try:
            wait_until(
                lambda: httpx.get(f"{stack.base}/healthz", timeout=5).status_code == 503, 30, "not ready"
            )
            livez = httpx.get(f"{stack.base}/livez", timeout=5)
            assert livez.status_code == 200
        finally:
            os.kill(paused, signal.SIGCONT)

        for thread in threads:
            thread.join(200)
        assert not errors, errors
        assert all(not thread.is_alive() for thread in threads)

        # Everything converges and verifies; no process was left dead.
        for bot in bots:
            wait_until(
                lambda bot=bot: (lambda hc: hc[0] == hc[1])(_head_and_checkpoint(stack, bot.game_id)),
                30,
                f"the projection of {bot.game_id} to reach its head",
            )
            export = httpx.get(f"{stack.base}/games/{bot.game_id}/export", timeout=10)
            assert export.status_code == 200, export.text
            report = verify_export(export.json(), bot.receipts)
            assert report.ok, report.render()
            assert 500 not in bot.statuses
        wait_until(stack.ready, 30, "serve to be ready again")
        assert stack.process.poll() is None
        assert stack.redis_pid() == paused
        assert stack.worker_pid() is not None
        retries = sum(bot.retries for bot in bots)
        receipts = sum(len(bot.receipts) for bot in bots)
        print(f"\n[faults] {receipts} receipts checked, {retries} requests retried through the faults")
    assert stack.process.returncode == 0, (tmp_path / "serve.log").read_text()[-3000:]
    log = (tmp_path / "serve.log").read_text()
    assert "unhandled_error" not in log  # the API answered 503, never a 500 (RQ may log a failed job)
