"""structlog set-up: one JSON line per record, with the request, game and command ids bound.

Tracebacks are rendered plain: frames (file, line, function) and the exception, never the frames'
local variables. structlog's defaults (``dict_tracebacks``, the console's rich tracebacks) show
locals, and a projection's locals hold the whole table state, every hidden hand and the undealt
deck included: a log line must never show what the rules hide.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog
from structlog.tracebacks import ExceptionDictTransformer

LEVEL_VARIABLE = "TABLESTREAM_LOG_LEVEL"

plain_dict_tracebacks = structlog.processors.ExceptionRenderer(
    ExceptionDictTransformer(show_locals=False, use_rich=False)
)
"""``structlog.processors.dict_tracebacks`` without locals."""


def processors(json: bool = True) -> list[structlog.types.Processor]:
    """The processor chain: context, level, time, then a JSON line (or, for a person at a terminal,
    the console renderer with plain tracebacks); either way no exception locals."""
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(exception_formatter=structlog.dev.plain_traceback)
    )
    chain: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if json:
        chain.append(plain_dict_tracebacks)
    chain.append(renderer)
    return chain


def configure_logging(json: bool = True, level: int | None = None, cache: bool = True) -> None:
    """JSON lines on stderr; the level comes from ``TABLESTREAM_LOG_LEVEL`` (default ``info``)."""
    if level is None:
        level = logging.getLevelNamesMapping().get(
            os.environ.get(LEVEL_VARIABLE, "info").upper(), logging.INFO
        )
    structlog.configure(
        processors=processors(json),
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=cache,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=sys.stderr)
