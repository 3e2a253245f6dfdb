"""structlog set-up: one JSON line per record, with the request, game and command ids bound."""

from __future__ import annotations

import logging
import os
import sys

import structlog

LEVEL_VARIABLE = "TABLESTREAM_LOG_LEVEL"


def configure_logging(json: bool = True, level: int | None = None, cache: bool = True) -> None:
    """JSON lines on stderr; the level comes from ``TABLESTREAM_LOG_LEVEL`` (default ``info``)."""
    if level is None:
        level = logging.getLevelNamesMapping().get(
            os.environ.get(LEVEL_VARIABLE, "info").upper(), logging.INFO
        )
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=cache,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=sys.stderr)
