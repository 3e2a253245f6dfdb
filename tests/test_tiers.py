"""The suite's tiers (tests/conftest.py): a test parametrised on fakeredis and a real Redis runs on
the real one alone in a run that takes both, and on fakeredis in the quick tier."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import real_twin

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
