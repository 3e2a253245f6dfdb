"""Every setting is checked at start (``services.operating.config.Settings.from_env``), all the bad ones named
together, one sentence each; ``serve``, ``worker`` and the API's processes then end with exit
status 2 and those sentences, no traceback, before starting anything."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from services.operating.config import ConfigError, Settings, settings_or_exit

BAD = {
    "TABLESTREAM_REDIS_MAX_CONNECTIONS": "lots",  # not a number
    "TABLESTREAM_SHUTDOWN_SECONDS": "-1",  # out of range
    "TABLESTREAM_BOT_NICENESS": "40",  # out of range
    "TABLESTREAM_REDIS_CLUSTER": "maybe",  # not a choice
    "TABLESTREAM_APPEND_ACK": "fsync",  # not a choice
    "TABLESTREAM_REDIS_URL": "http://user:hunter2@cache:6379/0",  # not a Redis URL, with a password
    "TABLESTREAM_QUEUE_URL": "redis://queue:99999/0",  # a port out of range
    "TABLESTREAM_CREATE_RATE": "fast",  # not a rate
}


def test_every_bad_setting_is_named_in_a_sentence_of_its_own_and_a_password_is_never_shown() -> None:
    with pytest.raises(ConfigError) as raised:
        Settings.from_env(BAD)
    problems = raised.value.problems
    assert len(problems) == len(BAD), problems
    for variable in BAD:
        (said,) = [p for p in problems if p.startswith(variable + "=")]
        assert said.endswith(".") and "\n" not in said, said
    assert not any("hunter2" in problem for problem in problems)
    said = dict(p.split("=", 1) for p in problems)
    assert "is not a whole number" in said["TABLESTREAM_REDIS_MAX_CONNECTIONS"]
    assert "above 0" in said["TABLESTREAM_SHUTDOWN_SECONDS"]
    assert "from 0 to 19" in said["TABLESTREAM_BOT_NICENESS"]
    assert "one of auto, yes, no" in said["TABLESTREAM_REDIS_CLUSTER"]
    assert "one of waitaof, wait" in said["TABLESTREAM_APPEND_ACK"]
    assert "Redis URL" in said["TABLESTREAM_REDIS_URL"]
    assert "port" in said["TABLESTREAM_QUEUE_URL"]
    assert "rate such as" in said["TABLESTREAM_CREATE_RATE"]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TABLESTREAM_LIVE_MAX_STREAMS", "0"),
        ("TABLESTREAM_REDIS_SOCKET_TIMEOUT", "nan"),
        ("TABLESTREAM_READY_CHECK_SECONDS", "-0.5"),
        ("TABLESTREAM_BOT_PACE_MS", "999999"),
        ("TABLESTREAM_REDIS_URL", "redis://:6379/0"),
        ("TABLESTREAM_REDIS_URL", "unix://"),
        ("TABLESTREAM_PUBLIC_ORIGIN", "tables.example"),
        ("TABLESTREAM_TRUSTED_PROXIES", "proxy.example"),
        ("TABLESTREAM_LOGIN_GUESS_RATE", "5 per forever"),
        ("TABLESTREAM_ARCHIVE_ENABLED", "maybe"),
        ("TABLESTREAM_ARCHIVE_AFTER_HOURS", "-1"),
    ],
)
def test_a_value_out_of_its_range_or_form_is_refused_by_name(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({variable: value})
    assert [p.split("=", 1)[0] for p in raised.value.problems] == [variable]


def test_good_values_of_every_kind_are_accepted() -> None:
    settings = Settings.from_env(
        {
            "TABLESTREAM_REDIS_URL": "rediss://user:pw@cache.internal:6380/2",
            "TABLESTREAM_QUEUE_URL": "unix:///run/redis.sock",
            "TABLESTREAM_REDIS_CLUSTER": "yes",
            "TABLESTREAM_APPEND_REPLICAS": "0",
            "TABLESTREAM_VIEW_CACHE_GAMES": "0",
            "TABLESTREAM_BOT_PACE_MS": "0",
            "TABLESTREAM_CREATE_RATE": "5/15 minutes",
            "TABLESTREAM_SHUTDOWN_SECONDS": "2.5",
            "TABLESTREAM_ARCHIVE_AFTER_HOURS": "0",
            "TABLESTREAM_ARCHIVE_ENABLED": "Off",
        }
    )
    assert settings.redis_cluster == "yes" and settings.shutdown_seconds == 2.5
    assert settings.archive_after_hours == 0 and settings.archive_enabled is False


def test_settings_or_exit_prints_one_line_per_problem_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        settings_or_exit("tablestream serve", BAD)
    assert ended.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("tablestream serve: ") and len(lines) == 1 + len(BAD)


COMMANDS = {
    "serve": [sys.executable, "-m", "services.cli", "serve", "--port", "1"],
    "worker": [sys.executable, "-m", "services.cli", "worker", "--redis-url", "redis://127.0.0.1:1/0"],
    "the API": [sys.executable, "-c", "import services.api.asgi"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_serve_worker_and_the_api_refuse_bad_settings_at_start_with_each_named_and_no_traceback(
    command: str, tmp_path: object
) -> None:
    env = {**os.environ, **BAD, "TABLESTREAM_DATA_DIR": str(tmp_path)}
    if command == "worker":
        env.pop("TABLESTREAM_REDIS_URL")  # given as a flag
    done = subprocess.run(COMMANDS[command], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and done.stdout == "", done.stderr[-2000:]
    named = [variable for variable in BAD if f"\n  {variable}=" in done.stderr]
    expected = [v for v in BAD if v in env]
    assert named == expected, done.stderr
