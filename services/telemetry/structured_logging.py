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
JSON_HANDLER = "tablestream-json"  # the root logger's handler of ``route_stdlib_logging``

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
    if not json:
        logging.basicConfig(level=max(level, logging.WARNING), stream=sys.stderr)
        return
    route_stdlib_logging(max(level, logging.WARNING))


def route_stdlib_logging(level: int) -> None:
    """The records of the stdlib ``logging`` loggers (rq's, uvicorn's, redis-py's) as JSON lines on
    stderr too, through the same renderer as structlog's own (``stdlib_formatter``): one handler on
    the root logger, in place of the one an earlier call put there (a test's own handlers stay). RQ
    adds its plain-text handlers only to a logger whose records no handler would catch
    (``rq.logutils.setup_loghandlers``), so its workers' and pool's lines come here; uvicorn's come
    here when it is started without its own logging configuration (``log_config=None``:
    ``services.cli.serve``). Below ``level`` (at least WARNING: RQ's and uvicorn's INFO lines are
    one per job or connection) nothing is written."""
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(JSON_HANDLER)
    handler.setFormatter(stdlib_formatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == JSON_HANDLER]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)


def stdlib_formatter() -> structlog.stdlib.ProcessorFormatter:
    """A stdlib record as structlog's JSON line: its level, its logger's name and the time, then
    the message as ``event``; an exception as a plain traceback dict, as in ``processors``."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            plain_dict_tracebacks,
            structlog.processors.JSONRenderer(),
        ],
    )
