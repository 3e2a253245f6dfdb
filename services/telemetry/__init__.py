"""Telemetry: what the service counts and how it logs (``metrics``: the Prometheus counters and
gauges; ``structured_logging``: structlog's JSON lines, with no secret in them).

A leaf every room above the domain may count and log in; it imports nothing of the service.
"""
