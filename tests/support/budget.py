"""The suite's time budget, printed at the end of every run: the slowest tests and the total.

Each test's time is its setup, call and teardown added up (what it costs the run, fixtures
included). A test that took longer than :data:`LIMIT_SECONDS` is named apart unless it is marked
``soak`` with the reason it may (a fault or soak test that must run real processes for long). The
figures are printed, never asserted: a loaded machine stretches every test, and a bound tuned to a
quiet machine would fail by chance (docs/development.md, "The suite's budget"). The time per folder
follows; ``TABLESTREAM_TEST_DURATIONS=FILE`` writes every test's time to FILE as JSON.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

SLOWEST = 20
LIMIT_SECONDS = 60.0

REFERENCE_STEPS = 20_000_000
"""The machine's speed, printed with the figures: CPython's time for a loop of this many additions,
one core, before the tests start. These shared machines differ by two times from day to day (the
loop took 3.5 s on the day the suite took 1,766 s for 6,541 s of test time): a run's figures are
compared with another's beside this one."""

_durations: dict[str, float] = defaultdict(float)
_soak: set[str] = set()
_started = time.monotonic()


_reference_seconds: float | None = None


def reference_loop_seconds(steps: int = REFERENCE_STEPS) -> float:
    began = time.perf_counter()
    total = 0
    for step in range(steps):
        total += step
    return time.perf_counter() - began


def pytest_configure(config: pytest.Config) -> None:
    global _started, _reference_seconds
    _started = time.monotonic()
    if config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        _reference_seconds = reference_loop_seconds()  # the controller of a parallel run, alone yet


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("soak")
        if marker is not None and not (marker.args or marker.kwargs.get("reason")):
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.soak needs the reason it may run long")


_cases: dict[str, int] = defaultdict(int)
_timeline: list[tuple[str, str, float, float]] = []
"""(worker, test, seconds into the run when its report came, its duration): which worker ran what,
when, for ``TABLESTREAM_TEST_DURATIONS``: the run's critical path is read from it."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # On xdist's controller too: the workers' reports reach it with their durations and keywords.
    # Cases that share one node id (schemathesis's, one per API operation) are counted each apart.
    if report.when == "setup":
        _cases[report.nodeid] += 1
    case = _cases[report.nodeid]
    key = report.nodeid if case <= 1 else f"{report.nodeid} (case {case})"
    _durations[key] += report.duration
    worker = getattr(getattr(report, "node", None), "gateway", None)
    _timeline.append((getattr(worker, "id", "main"), key, time.monotonic() - _started, report.duration))
    if "soak" in report.keywords:
        _soak.add(key)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _durations or hasattr(terminalreporter.config, "workerinput"):
        return
    write = terminalreporter.write_line
    slowest = sorted(_durations.items(), key=lambda item: item[1], reverse=True)[:SLOWEST]
    terminalreporter.section(f"the {len(slowest)} slowest tests (setup + call + teardown)")
    for nodeid, seconds in slowest:
        write(f"{seconds:8.1f} s  {nodeid}{'  [soak]' if nodeid in _soak else ''}")
    over = [n for n, s in _durations.items() if s > LIMIT_SECONDS and n not in _soak]
    if over:
        write(f"over {LIMIT_SECONDS:g} s without a soak mark ({len(over)}): {', '.join(sorted(over))}")
    total = sum(_durations.values())
    places: dict[str, float] = defaultdict(float)
    for nodeid, seconds in _durations.items():
        places[_place(nodeid)] += seconds
    shares = sorted(places.items(), key=lambda item: item[1], reverse=True)
    write("where the test time goes: " + ", ".join(f"{place} {seconds:.0f} s" for place, seconds in shares))
    write(
        f"total: {len(_durations)} tests, {total:.0f} s of test time, "
        f"{time.monotonic() - _started:.0f} s on the clock"
    )
    if _reference_seconds is not None:
        write(f"this machine's speed: {REFERENCE_STEPS:,} additions in {_reference_seconds:.2f} s (one core)")
    if path := os.environ.get("TABLESTREAM_TEST_DURATIONS"):
        Path(path).write_text(json.dumps(dict(sorted(_durations.items())), indent=0))
        Path(path).with_suffix(".timeline.json").write_text(json.dumps(_timeline, indent=0))
        write(f"every test's time: {path}")


def _place(nodeid: str) -> str:
    """tests/api, tests/browser, tests/services/store...: the folder a test's time is counted in."""
    parts = nodeid.split("::")[0].split("/")[:-1]
    return "/".join(parts[:3] if len(parts) > 1 and parts[1] == "services" else parts[:2])
