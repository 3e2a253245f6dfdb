"""Configuration from the environment (and CLI flags, which override it).

Every setting has a safe default and an environment variable ``TABLESTREAM_<NAME>`` (upper case);
README's "Settings" table lists them. A value that does not parse stops the process at start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import platformdirs

ENV_PREFIX = "TABLESTREAM_"


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = None
    admin_token: str | None = None  # the operator's audit token; never a player's or host's
    data_dir: Path = Path(platformdirs.user_data_dir("tablestream"))
    live_poll_seconds: float = 1.0  # how long a live stream waits for a wake-up before re-reading

    # -- Redis client ------------------------------------------------------------------------------
    redis_max_connections: int = 50  # per API process; a full pool waits, it does not fail
    redis_pool_timeout: float = 5.0  # seconds a request waits for a pooled connection, then 503
    redis_socket_timeout: float = 5.0  # a Redis that stops answering fails a request after this

    # -- live streams --------------------------------------------------------------------------------
    live_max_streams: int = 2000  # per API process; past it 503 too_many_streams
    live_max_streams_per_client: int = 20  # per client address; past it 429 too_many_streams
    live_heartbeat_seconds: float = 15.0  # a comment line on a quiet stream, so proxies keep it
    live_queue_size: int = 16  # wake-ups buffered per stream; a slow stream drops extras, not memory

    # -- HTTP ----------------------------------------------------------------------------------------
    header_timeout_seconds: float = 10.0  # request headers must be complete within this, else closed
    body_timeout_seconds: float = 10.0  # a request body must arrive within this, else 408
    keep_alive_seconds: int = 5  # uvicorn's timeout_keep_alive: idle connections are closed
    max_header_bytes: int = 16 * 1024  # uvicorn's h11_max_incomplete_event_size (h11 only)
    shutdown_seconds: float = 10.0  # Ctrl-C / SIGTERM: requests and streams drain within this

    # -- abuse limits --------------------------------------------------------------------------------
    rate_limit_storage: str = "async+memory://"  # limits' storage URI; async+redis://... shares counts
    create_rate: str = "30/minute"  # tables created per client address
    join_rate: str = "60/minute"  # seats taken per client address
    command_rate: str = "1200/minute"  # commands per client address
    max_waiting_tables: int = 10_000  # tables waiting for players, all API processes together

    # -- readiness -------------------------------------------------------------------------------------
    ready_max_lag_seconds: float = 30.0  # /healthz is 503 when a projection lags longer than this

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Settings from ``TABLESTREAM_*`` variables; unset or empty ones keep their defaults."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for spec in fields(cls):
            raw = env.get(ENV_PREFIX + spec.name.upper())
            if not raw:
                continue
            default = getattr(cls, spec.name)
            try:
                if isinstance(default, bool):
                    values[spec.name] = raw.lower() in {"1", "true", "yes", "on"}
                elif isinstance(default, int):
                    values[spec.name] = int(raw)
                elif isinstance(default, float):
                    values[spec.name] = float(raw)
                elif isinstance(default, Path):
                    values[spec.name] = Path(raw)
                else:
                    values[spec.name] = raw
            except ValueError:
                raise ValueError(f"{ENV_PREFIX}{spec.name.upper()}={raw!r} is not a valid value") from None
        return cls(**values)
