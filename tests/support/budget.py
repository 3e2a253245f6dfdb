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
import resource
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

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
_timeline: list[tuple[str, str, float, float, float]] = []
"""(worker, test, seconds into the run when its report came, its duration, its CPU seconds): which
worker ran what, when, at what cost, for ``TABLESTREAM_TEST_DURATIONS``. On a 2-core machine with
four workers the cores are busy for the whole run, so a test's CPU, not its time, is what it costs
the others."""
_CPU = "cpu_seconds"


def cpu_seconds() -> float:
    """This process's CPU and that of its children it has waited for (a server a test started and
    stopped, a browser and its driver), user and system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_started_cpu: dict[str, float] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _started_cpu[item.nodeid] = cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    if call.when == "teardown" and (began := _started_cpu.pop(item.nodeid, None)) is not None:
        outcome.get_result().user_properties.append((_CPU, cpu_seconds() - began))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # On xdist's controller too: the workers' reports reach it with their durations and keywords.
    # Cases that share one node id (schemathesis's, one per API operation) are counted each apart.
    if report.when == "setup":
        _cases[report.nodeid] += 1
    case = _cases[report.nodeid]
    key = report.nodeid if case <= 1 else f"{report.nodeid} (case {case})"
    _durations[key] += report.duration
    if report.when == "teardown":
        worker = getattr(getattr(report, "node", None), "gateway", None)
        cpu = sum(value for name, value in report.user_properties if name == _CPU)
        ended = time.monotonic() - _started
        _timeline.append((getattr(worker, "id", "main"), key, ended, _durations[key], cpu))
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
    costliest = sorted((entry for entry in _timeline if entry[4] > 0), key=lambda entry: -entry[4])[:SLOWEST]
    if costliest:
        terminalreporter.section(f"the {len(costliest)} costliest tests in CPU (a worker and its children)")
        for _, nodeid, _, _, cpu in costliest:
            write(f"{cpu:8.1f} s  {nodeid}")
    over = [n for n, s in _durations.items() if s > LIMIT_SECONDS and n not in _soak]
    if over:
        write(f"over {LIMIT_SECONDS:g} s without a soak mark ({len(over)}): {', '.join(sorted(over))}")
    total = sum(_durations.values())
    cpu = sum(entry[4] for entry in _timeline)
    places: dict[str, float] = defaultdict(float)
    for nodeid, seconds in _durations.items():
        places[_place(nodeid)] += seconds
    shares = sorted(places.items(), key=lambda item: item[1], reverse=True)
    write("where the test time goes: " + ", ".join(f"{place} {seconds:.0f} s" for place, seconds in shares))
    write(
        f"total: {len(_durations)} tests, {total:.0f} s of test time, "
        f"{cpu:.0f} s of CPU, {time.monotonic() - _started:.0f} s on the clock"
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
