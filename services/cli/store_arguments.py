"""The flags of a command that talks to the store directly (``operator``, ``keys``)."""

from __future__ import annotations

import argparse
import os

from services.store.connection import CLUSTER_MODES


def store_arguments(parser: argparse.ArgumentParser) -> None:
    """``--redis-url`` (required unless ``TABLESTREAM_REDIS_URL``), ``--queue-url``, ``--redis-cluster``."""
    env = os.environ
    parser.add_argument(
        "--redis-url",
        default=env.get("TABLESTREAM_REDIS_URL"),
        required=not env.get("TABLESTREAM_REDIS_URL"),
        help="the event store (TABLESTREAM_REDIS_URL)",
    )
    parser.add_argument("--queue-url", default=env.get("TABLESTREAM_QUEUE_URL") or None)
    parser.add_argument(
        "--redis-cluster", choices=CLUSTER_MODES, default=env.get("TABLESTREAM_REDIS_CLUSTER") or "auto"
    )
