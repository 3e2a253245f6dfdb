"""Offline checks of the Grafana dashboard and the Prometheus alert rules (deploy/): their shape, a
minimal parse of every PromQL expression, and the metric names they read."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "tablestream.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yaml"

FUNCTIONS = frozenset(
    {
        "rate", "irate", "increase", "sum", "max", "min", "avg", "count", "histogram_quantile", "deriv",
        "delta", "abs", "clamp_min", "clamp_max", "max_over_time", "min_over_time", "avg_over_time", "absent",
        "vector", "topk", "label_replace", "time", "scalar",
    }
)  # fmt: skip
KEYWORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool"}
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SELECTOR = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[(?:\d+[smhd]|\$__rate_interval|\$__interval)(?::\d+[smhd])?\]")
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_MATCHER = re.compile(r'\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)")
_NUMBER = re.compile(r"(?<![A-Za-z0-9_:])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SUFFIXES = ("_bucket", "_count", "_sum", "_created")


class PromQLError(ValueError):
    pass


def check_expression(expr: str) -> set[str]:
    """A minimal parse of one PromQL expression: balanced brackets, well-formed label matchers
    and ranges, only known functions; returns the metric names it reads."""
    depth = {"(": 0, "[": 0, "{": 0}
    pairs = {")": "(", "]": "[", "}": "{"}
    for char in _STRING.sub('""', expr):
        if char in depth:
            depth[char] += 1
        elif char in pairs:
            depth[pairs[char]] -= 1
            if depth[pairs[char]] < 0:
                raise PromQLError(f"unbalanced {char!r} in {expr!r}")
    if any(depth.values()):
        raise PromQLError(f"unbalanced brackets in {expr!r}")
    for selector in _SELECTOR.findall(expr):
        body = selector[1:-1]
        if body.strip() and not all(_MATCHER.fullmatch(part) for part in _split_matchers(body)):
            raise PromQLError(f"bad label matcher {selector!r} in {expr!r}")
    for bracket in re.findall(r"\[[^\]]*\]", expr):
        if not _RANGE.fullmatch(bracket):
            raise PromQLError(f"bad range {bracket!r} in {expr!r}")
    bare = _GROUPING.sub(" ", _RANGE.sub(" ", _SELECTOR.sub(" ", _STRING.sub(" ", expr))))
    bare = _NUMBER.sub(" ", bare)
    names: set[str] = set()
    for match in _IDENT.finditer(bare):
        word = match.group(0)
        following = bare[match.end() :].lstrip()
        if following.startswith("("):
            if word not in FUNCTIONS and word not in KEYWORDS:
                raise PromQLError(f"unknown function {word!r} in {expr!r}")
        elif word in KEYWORDS or word in FUNCTIONS:
            continue
        elif bare[match.start() - 1 : match.start()] != "$":  # not a Grafana variable
            names.add(word)
    return names


def _split_matchers(body: str) -> list[str]:
    parts, current, quoted = [], "", False
    for char in body:
        if char == '"' and not current.endswith("\\"):
            quoted = not quoted
        if char == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current)
    return parts


def family_of(name: str) -> str:
    """The family a sample name belongs to (a histogram's ``_bucket``, a counter's ``_total``)."""
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def dashboard_expressions(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def alert_rules(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [rule for group in document["groups"] for rule in group["rules"]]


def load_dashboard() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return document


def load_alerts() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(ALERTS.read_text())
    return document


EXPORTER_PREFIX = "redis_"
"""The dashboard's Redis panel reads redis_exporter's figures, which the service does not export
(docs/operations.md, "Dashboard")."""


def named_metrics() -> set[str]:
    """Every metric name the dashboard and the alert rules read from the service (those of
    redis_exporter left out: ``EXPORTER_PREFIX``)."""
    names: set[str] = set()
    for expr in dashboard_expressions(load_dashboard()):
        names |= check_expression(expr)
    for rule in alert_rules(load_alerts()):
        names |= check_expression(rule["expr"])
    return {name for name in names if not name.startswith(EXPORTER_PREFIX)}


def exporter_metrics() -> set[str]:
    """The metric names the dashboard reads from redis_exporter."""
    names: set[str] = set()
    for expr in dashboard_expressions(load_dashboard()):
        names |= check_expression(expr)
    return {name for name in names if name.startswith(EXPORTER_PREFIX)}
