"""The suite's tiers (tests/conftest.py): a test parametrised on fakeredis and a real Redis runs on
the real one alone in a run that takes both, and on fakeredis in the quick tier. And its units of
work: what one worker runs whole, so that servers start once."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import CLUSTER_GROUP, check_work_units, real_twin, work_unit

ROOT = Path(__file__).resolve().parent.parent
MODULE = "tests/api/test_your_tables.py"  # its tests run on fakeredis and on a real Redis


def test_a_fakeredis_run_is_paired_with_the_same_test_on_a_real_redis_and_nothing_else_is() -> None:
    assert real_twin("tests/a.py::test_x[fakeredis]") == "tests/a.py::test_x[redis]"
    assert real_twin("tests/a.py::test_x[fakeredis-2]") == "tests/a.py::test_x[redis-2]"
    assert real_twin("tests/a.py::test_x[3-fakeredis]") == "tests/a.py::test_x[3-redis]"
    assert real_twin("tests/a.py::test_x[redis]") is None
    assert real_twin("tests/a.py::test_fakeredis_names") is None
    assert real_twin("tests/a.py::test_x[not_fakeredis_param]") is None


def collected(*args: str) -> list[str]:
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:randomly", MODULE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in ran.stdout.splitlines() if line.startswith(MODULE + "::")]


@pytest.mark.thorough
def test_the_full_run_takes_the_real_redis_run_of_a_twin_and_the_quick_tier_its_fakeredis_run() -> None:
    both = collected("--fakeredis-twins")
    fakes = [nodeid for nodeid in both if real_twin(nodeid)]
    assert fakes and all(real_twin(nodeid) in both for nodeid in fakes)
    assert collected() == [nodeid for nodeid in both if nodeid not in fakes]
    quick = collected("-m", "not redis and not browser and not slow and not thorough")
    quick_fakes = [nodeid for nodeid in quick if real_twin(nodeid)]  # its thorough ones are left out
    assert quick_fakes and set(quick_fakes) <= set(fakes)
    assert not {real_twin(nodeid) for nodeid in fakes} & set(quick)


def test_each_unit_of_work_is_a_browser_group_the_clusters_tests_a_whole_module_or_one_test() -> None:
    assert work_unit("tests/browser/test_games.py::test_a") == work_unit(
        "tests/browser/test_games.py::test_b"
    )
    assert work_unit("tests/browser/test_games.py::test_a").startswith("browser-")
    assert work_unit("tests/workers/test_archive.py::test_a[cluster]") == CLUSTER_GROUP
    assert work_unit("tests/api/test_cluster.py::test_a[skull-3]") == CLUSTER_GROUP
    assert work_unit("tests/services/hardening/test_durable_replicas.py::test_a") == CLUSTER_GROUP
    assert work_unit("tests/api/test_metrics_processes.py::test_a") == "tests/api/test_metrics_processes.py"
    assert (
        work_unit("tests/workers/test_archive.py::test_a[redis]")
        == "tests/workers/test_archive.py::test_a[redis]"
    )


def item(nodeid: str, **fixtures: tuple[str, str]) -> Any:
    """A collected test as check_work_units reads it: its node id and, by name, each fixture's
    scope and where it is defined."""
    definitions = {
        name: [SimpleNamespace(scope=scope, baseid=baseid)] for name, (scope, baseid) in fixtures.items()
    }
    return SimpleNamespace(
        nodeid=nodeid,
        _fixtureinfo=SimpleNamespace(names_closure=list(fixtures), name2fixturedefs=definitions),
    )


def test_a_collection_that_would_start_servers_in_every_worker_is_refused_with_the_test_named() -> None:
    check_work_units(
        [
            item("tests/a/test_x.py::test_a[cluster]", redis_cluster=("session", "")),
            item(
                "tests/api/test_metrics_processes.py::test_a",
                stack=("module", "tests/api/test_metrics_processes.py"),
            ),
            item("tests/a/test_x.py::test_b", real_redis=("function", ""), fixed=("module", "tests/a")),
        ]
    )
    with pytest.raises(pytest.UsageError, match=re.escape("test_x.py::test_b uses the cluster")):
        check_work_units([item("tests/a/test_x.py::test_b", redis_cluster=("session", ""))])
    with pytest.raises(pytest.UsageError, match=re.escape("test_y.py has the module-scoped fixture 'stack'")):
        check_work_units([item("tests/a/test_y.py::test_c", stack=("module", "tests/a/test_y.py"))])
