"""The import graph keeps the layers apart: no loops, a pure domain, Redis and Starlette each in one place.

The graph is built by grimp from the source (imports inside functions and under TYPE_CHECKING
count too), with third-party and standard-library packages as single nodes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from functools import cache

import grimp
import pytest

PACKAGES = ("domain", "projections", "bots", "workers", "services")

# The units whose imports must form no loop: each is one kind of code (see README's Layout).
UNITS = (
    "services.history",
    "services.store",
    "services.api",
    "services.cli",
    "services.bench",  # the benchmark harness: measures the stack from outside, never on the hot path
    "services.metrics",  # Prometheus counters: a leaf every layer above the domain may count in
    "services",  # the application layer: commands, queries, callers, errors, config
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


def test_the_application_layer_imports_neither_the_api_nor_the_cli() -> None:
    application = [m for m in modules_in("services") if unit_of(m) == "services"]
    assert application, "the application modules exist"
    found = {
        f"{module} -> {imported}"
        for module in application
        for imported in imports_of(module)
        if within(imported, "services.api") or within(imported, "services.cli")
    }
    assert found == set()


def test_the_loop_finder_names_a_loop_and_passes_a_tree() -> None:
    assert find_cycle("abc", {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle("abc", {"a": {"b", "c"}, "b": {"c"}}) is None
