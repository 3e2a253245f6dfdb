"""The import graph keeps the layers apart: no loops, a pure domain, Redis and Starlette each in one place.

The graph is built by grimp from the source (imports inside functions and under TYPE_CHECKING
count too), with third-party and standard-library packages as single nodes.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from functools import cache

import grimp
import pytest

PACKAGES = ("domain", "projections", "bots", "workers", "services")

# The rooms of services/, each with the rooms it may import besides the domain, the pure packages
# (projections, bots), the standard library and third-party packages. Each room's __init__ says the
# same in words; services.errors is the one vocabulary of refusals, under every room that refuses.
ROOMS: dict[str, set[str]] = {
    "services.history": set(),  # pure code over a stored stream
    "services.telemetry": set(),  # metrics and logs: a leaf
    "services.store": {"services.history", "services.telemetry"},
    "services.fairness": {"services.history", "services.store", "services.telemetry"},
    "services.table": {
        "services.errors",
        "services.history",
        "services.store",
        "services.fairness",
        "services.telemetry",
    },
    "services.accounts": {"services.errors", "services.store", "services.telemetry"},
    "services.operating": {
        "services.errors",
        "services.store",
        "services.telemetry",
        "services.fairness",
        "services.table",
        "services.accounts",
    },
    "services.people": {
        "services.errors",
        "services.history",
        "services.store",
        "services.telemetry",
        "services.table",
        "services.accounts",
        "services.operating",
    },
    "services.disputes": {
        "services.errors",
        "services.history",
        "services.store",
        "services.telemetry",
        "services.fairness",
        "services.table",
    },
    "services.errors": set(),
}

# The units whose imports must form no loop: the rooms, then the outer shells.
UNITS = (
    *ROOMS,
    "services.api",
    "services.cli",
    "services.bench",  # the benchmark harness: measures the stack from outside, never on the hot path
    "services",  # the package's own __init__: extra games named by the environment
    "bots",
    "workers",
    "projections",
    "domain",
)


@cache
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, include_external_packages=True)


def internal(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def modules_in(package: str) -> list[str]:
    return sorted(m for m in graph().modules if within(m, package))


def imports_of(module: str) -> set[str]:
    return set(graph().find_modules_directly_imported_by(module))


def unit_of(module: str) -> str:
    return next(unit for unit in UNITS if within(module, unit))


def find_cycle(nodes: Iterable[str], edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph, as the list of its nodes, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for successor in sorted(edges.get(node, ())):
            if state.get(successor) == 1:
                return [*path[path.index(successor) :], successor]
            if successor not in state and (found := visit(successor)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(nodes):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_module_imports_itself_back_through_other_modules() -> None:
    modules = [m for m in graph().modules if internal(m)]
    edges = {m: {i for i in imports_of(m) if internal(i)} for m in modules}
    assert find_cycle(modules, edges) is None


def test_the_layers_import_each_other_without_a_loop() -> None:
    edges: dict[str, set[str]] = {unit: set() for unit in UNITS}
    for module in graph().modules:
        if internal(module):
            edges[unit_of(module)] |= {unit_of(i) for i in imports_of(module) if internal(i)} - {
                unit_of(module)
            }
    assert find_cycle(UNITS, edges) is None


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        ("domain", {"domain", "msgspec"}),
        # openskill: the rating math of projections.ratings, a pure library (floats in, floats out)
        # babel: CLDR's plural rules for the glossary's counted words, pure data (numbers in, categories out)
        ("projections", {"projections", "domain", "msgspec", "openskill", "babel"}),
        # the bots are pure policy over a seat's view: the API's hints and the workers both ask them
        ("bots", {"bots", "domain", "msgspec"}),
    ],
)
def test_the_pure_packages_import_only_themselves_the_standard_library_and_msgspec(
    package: str, allowed: set[str]
) -> None:
    outside = {
        f"{module} -> {imported}"
        for module in modules_in(package)
        for imported in imports_of(module)
        if imported.split(".")[0] not in allowed and imported.split(".")[0] not in sys.stdlib_module_names
    }
    assert outside == set()


@pytest.mark.parametrize("external", ["redis", "starlette", "rq"])
def test_the_history_code_reaches_no_redis_starlette_or_rq(external: str) -> None:
    assert not graph().chain_exists(importer="services.history", imported=external, as_packages=True)


def test_only_the_api_and_the_bench_baselines_import_starlette() -> None:
    importers = graph().find_modules_that_directly_import("starlette")
    assert importers, "the API imports starlette, so the check would find it"
    bench = {"services.bench.server", "services.bench.hot_routes"}  # a baseline; the app in process
    assert {m for m in importers if not within(m, "services.api") and m not in bench} == set()


def test_only_the_store_imports_redis_and_rq_among_the_services_but_the_bench_redis() -> None:
    redis_importers = graph().find_modules_that_directly_import("redis")
    rq_importers = graph().find_modules_that_directly_import("rq")
    services = {m for m in redis_importers | rq_importers if within(m, "services")}
    assert services, "the store imports redis, so the check would find it"
    outside = {m for m in services if not within(m, "services.store")}
    assert {m for m in outside if not within(m, "services.bench") or m in rq_importers} == set()


def test_only_the_bench_command_imports_the_bench() -> None:
    importers = {
        module
        for module in graph().modules
        if internal(module) and not within(module, "services.bench")
        for imported in imports_of(module)
        if within(imported, "services.bench")
    }
    assert importers == {"services.cli.bench"}


def test_nothing_in_services_imports_the_workers() -> None:
    found = {
        f"{module} -> {imported}"
        for module in modules_in("services")
        for imported in imports_of(module)
        if within(imported, "workers")
    }
    assert found == set()


def test_the_workers_use_the_store_and_the_history_never_the_api_or_the_cli() -> None:
    found = {
        f"{module} -> {imported}"
        for module in modules_in("workers")
        for imported in imports_of(module)
        if within(imported, "services.api") or within(imported, "services.cli")
    }
    assert found == set()


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("services.history", "services.store"),
        ("services.history", "services.api"),
        ("services.history", "services.cli"),
        ("services.store", "services.api"),
        ("services.store", "services.cli"),
        ("services.api", "services.cli"),
        ("services.bench", "services.cli"),
        ("services.store", "services.bench"),
        ("services.api", "services.bench"),
    ],
)
def test_a_lower_layer_never_imports_a_higher_one(lower: str, higher: str) -> None:
    assert not graph().chain_exists(importer=lower, imported=higher, as_packages=True)


def test_services_holds_rooms_and_only_the_errors_module_beside_them() -> None:
    loose = {m for m in modules_in("services") if m.count(".") == 1 and m not in UNITS}
    assert loose == set()


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_each_room_imports_only_the_rooms_below_it_that_it_names(room: str) -> None:
    outside = {
        f"{module} -> {imported}"
        for module in modules_in(room)
        for imported in imports_of(module)
        if within(imported, "services")
        and not within(imported, room)
        and unit_of(imported) not in ROOMS[room]
    }
    assert outside == set()


@pytest.mark.parametrize("room", sorted(set(ROOMS) - {"services.errors"}))  # errors: a module, not a room
def test_each_room_says_what_it_owns_and_what_it_may_import(room: str) -> None:
    doc = importlib.import_module(room).__doc__ or ""
    assert "import" in doc and len(doc.split()) > 25
