"""Configuration from the environment (and CLI flags, which override it)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = None
    admin_token: str | None = None  # the operator's audit token; never a player's or host's
    data_dir: Path = Path(platformdirs.user_data_dir("tablestream"))
    live_poll_seconds: float = 1.0  # how long a live stream waits for a wake-up before re-reading

    @classmethod
    def from_env(cls) -> Settings:
        data_dir = os.environ.get("TABLESTREAM_DATA_DIR")
        return cls(
            redis_url=os.environ.get("TABLESTREAM_REDIS_URL") or None,
            admin_token=os.environ.get("TABLESTREAM_ADMIN_TOKEN") or None,
            data_dir=Path(data_dir) if data_dir else cls.data_dir,
        )
