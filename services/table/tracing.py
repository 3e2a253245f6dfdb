"""OpenTelemetry traces: optional (the ``tracing`` extra), off by default, configured by the standard
``OTEL_*`` environment variables.

Tracing is on in a process when ``configure_tracing()`` finds the extra installed, ``OTEL_SDK_DISABLED``
not ``true``, and an exporter asked for: ``OTEL_TRACES_EXPORTER`` (``otlp`` or ``console``; ``none``
keeps it off) or an OTLP endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, which mean ``otlp``). The SDK reads the rest itself:
``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER`` (and its argument), the
exporter's headers, timeout and compression, the batch processor's ``OTEL_BSP_*``; the propagators
are ``OTEL_PROPAGATORS`` (default W3C trace context and baggage). The OTLP exporter speaks
HTTP/protobuf (``http://collector:4318``), the one the extra installs.

One command is one trace:

- ``http.server`` (``services.api.request_log``): the request, named ``METHOD /route/{template}``;
- ``store.append``: the append, with the game id and the version it appended (``services.table.commands``);
- ``projection.handover``: the hand-over to the projection consumers (``TracedAppendNotifier``),
  whose trace context is pushed on a short list (``services.store.queue.TRACE_LINKS``);
- ``projection.batch``: a consumer's batch of hand-overs (``workers.handover``), a trace of its own
  *linked* (span links, not parented: a batch serves many commands) to the hand-overs it took; its
  ``projection.write_views`` children, one per game it wrote.

When tracing is off every hook is one test of ``ON`` (a module global): no context is made, no
span, no allocation.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import structlog

from services.store.operations import Handover
from services.store.queue import AppendNotifier, remember_handover

if TYPE_CHECKING:  # the extra may be absent: nothing of it is imported unless tracing is switched on
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

log = structlog.get_logger("tablestream.tracing")

ON = False
"""Whether this process traces (set by ``configure_tracing`` or ``use_provider``)."""

TRACER_NAME = "tablestream"

GAME_ID = "tablestream.game.id"
VERSION = "tablestream.game.version"

_tracer: Tracer | None = None
_provider: TracerProvider | None = None

_NOTHING = contextlib.nullcontext(None)


def wanted(environ: Mapping[str, str]) -> str | None:
    """The exporter the environment asks for (``otlp``, ``console``), or ``None``: tracing stays off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        first = exporter.split(",")[0].strip()
        return None if first == "none" else first
    if environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return "otlp"
    return None


def configure_tracing(environ: Mapping[str, str] | None = None) -> bool:
    """Switch tracing on if the environment asks for it and the extra is installed; returns whether
    it is on. Called once per process at start (the API, each worker). Without the extra, or with an
    exporter it does not know, it logs why and stays off: a process never fails to start for it."""
    global _configured
    _configured = True
    exporter_name = wanted(os.environ if environ is None else environ)
    if exporter_name is None:
        return ON
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
    except ImportError:
        log.warning(
            "tracing_unavailable", reason="the tracing extra is not installed", exporter=exporter_name
        )
        return ON
    exporter: SpanExporter
    if exporter_name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            log.warning("tracing_unavailable", reason="no OTLP exporter installed", exporter=exporter_name)
            return ON
        exporter = OTLPSpanExporter()
    elif exporter_name == "console":
        exporter = ConsoleSpanExporter()
    else:
        log.warning("tracing_unavailable", reason="unknown OTEL_TRACES_EXPORTER", exporter=exporter_name)
        return ON
    provider = TracerProvider()  # resource (OTEL_SERVICE_NAME...) and sampler from the environment
    provider.add_span_processor(BatchSpanProcessor(exporter))
    use_provider(provider)
    log.info("tracing_on", exporter=exporter_name)
    return True


_configured = False


def configure_once() -> bool:
    """``configure_tracing()`` the first time it is called in this process (a job in a pool's
    process, spawned or forked); after that one test of a flag. Returns whether tracing is on."""
    global _configured
    if not _configured:
        _configured = True
        configure_tracing()
    return ON


def use_provider(provider: TracerProvider | None) -> None:
    """Trace with ``provider`` (tests hand in one with an in-memory exporter); ``None``: off again.
    The provider is this module's own, not OpenTelemetry's global one (which can be set only once)."""
    global ON, _tracer, _provider
    if provider is None:
        ON, _tracer, _provider = False, None, None
        return
    _provider = provider
    _tracer = provider.get_tracer(TRACER_NAME)
    ON = True


def shutdown() -> None:
    """Flush the spans still buffered (a process that exits)."""
    if _provider is not None:
        _provider.shutdown()


def tracer() -> Tracer:
    assert _tracer is not None, "tracing is off"
    return _tracer


def span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[Span | None]:
    """A span made current for the block (its attributes without ``None`` values), or, tracing off,
    a shared no-op context that yields ``None``."""
    if not ON:
        return _NOTHING
    return tracer().start_as_current_span(
        name, attributes={key: value for key, value in attributes.items() if value is not None}
    )


def carrier() -> dict[str, str]:
    """The current trace context as text headers (``traceparent``...), for a job's ``meta``; empty
    when tracing is off or no span is current."""
    if not ON:
        return {}
    from opentelemetry import propagate

    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


def ids() -> tuple[str, str] | None:
    """The current trace and span ids in hex (for a log line), or ``None``."""
    if not ON:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


@contextlib.contextmanager
def job_span(
    name: str, meta: Mapping[str, Any] | None, linked: Sequence[Mapping[str, str]] = (), **attributes: Any
) -> Iterator[Span | None]:
    """A job's span, current for the block: a child of the context in the job's ``meta`` (the
    hand-over that queued it), linked to the contexts in ``linked`` (other hand-overs it covers)."""
    if not ON:
        yield None
        return
    from opentelemetry import propagate, trace

    parent = propagate.extract({k: v for k, v in (meta or {}).items() if isinstance(v, str)})
    links = []
    for headers in linked:
        context = trace.get_current_span(propagate.extract(headers)).get_span_context()
        if context.is_valid:
            links.append(trace.Link(context))
    with tracer().start_as_current_span(
        name,
        context=parent,
        kind=trace.SpanKind.CONSUMER,
        links=links,
        attributes={key: value for key, value in attributes.items() if value is not None},
    ) as current:
        yield current


def start_child(name: str, **attributes: Any) -> Span | None:
    """A span started now under the current one and NOT made current: for a step of a generator
    operation run in lockstep with others (``SyncEventStore.run_all``), ended by ``end``."""
    if not ON:
        return None
    return tracer().start_span(
        name, attributes={key: value for key, value in attributes.items() if value is not None}
    )


def end(span_: Span | None, **attributes: Any) -> None:
    """Set ``attributes`` on a span of ``start_child`` and end it (nothing for ``None``)."""
    if span_ is None:
        return
    for key, value in attributes.items():
        if value is not None:
            span_.set_attribute(key, value)
    span_.end()


class TracedAppendNotifier(AppendNotifier):
    """``AppendNotifier`` (the hand-over after an append) that, tracing on, runs in a
    ``projection.handover`` span and leaves the span's context for the consumer batch that projects
    the game to link to (``services.store.queue.remember_handover``). Tracing off: the plain
    notifier, after one test of ``ON``."""

    async def __call__(self, game_id: str, handover: Handover) -> None:
        if not ON:
            await super().__call__(game_id, handover)
            return
        with span("projection.handover", **{GAME_ID: game_id}):
            await super().__call__(game_id, handover)
            meta = carrier()
            if handover.poke:
                await anyio.to_thread.run_sync(remember_handover, self.queue.connection, meta)
